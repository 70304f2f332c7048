//===- LocalGroup.cpp - Shared state of a group of thread ranks -----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/local/LocalGroup.h"

#include "comm/CommBuffer.h"
#include "comm/Reduce.h"
#include "core/Failure.h"

#include <algorithm>
#include <cstring>
#include <optional>

using namespace zshard::rt;

namespace {

std::string describeCall(const Collective &c) {
  std::string text = collectiveName(c.kind);
  if (c.kind == Collective::Kind::Barrier)
    return text;
  text += " of " + std::to_string(c.count) + " " + commDTypeName(c.dtype);
  if (c.kind != Collective::Kind::AllGather)
    text += std::string(" ") + reduceOpName(c.op);
  return text;
}

bool sameCall(const Collective &a, const Collective &b) {
  if (a.kind != b.kind)
    return false;
  if (a.kind == Collective::Kind::Barrier)
    return true;
  return a.count == b.count && a.dtype == b.dtype &&
         (a.kind == Collective::Kind::AllGather || a.op == b.op);
}

const char *at(const void *base, int64_t elements, CommDType dtype) {
  return static_cast<const char *>(base) + elements * commDTypeSize(dtype);
}

char *at(void *base, int64_t elements, CommDType dtype) {
  return static_cast<char *>(base) + elements * commDTypeSize(dtype);
}

} // namespace

LocalGroup::LocalGroup(int size, EmulatedLink link)
    : emulatedLink(link), barrier(size), slots(size_t(size)) {}

std::string LocalGroup::disagreement() const {
  for (size_t j = 1; j < slots.size(); ++j)
    if (!sameCall(slots[0].collective, slots[j].collective))
      return "ranks disagree: rank 0 calls " +
             describeCall(slots[0].collective) + ", rank " + std::to_string(j) +
             " calls " + describeCall(slots[j].collective);
  return "";
}

void LocalGroup::work(int rank, const Collective &c, void *staging) {
  const int n = size();
  std::vector<const void *> srcs(size_t(n), nullptr);
  switch (c.kind) {
  case Collective::Kind::AllGather: {
    const size_t bytes = size_t(c.count) * commDTypeSize(c.dtype);
    for (int j = 0; j < n; ++j) {
      char *dst = at(c.recv, j * c.count, c.dtype);
      if (bytes && slots[size_t(j)].collective.send != dst)
        std::memcpy(dst, slots[size_t(j)].collective.send, bytes);
    }
    return;
  }
  case Collective::Kind::ReduceScatter: {
    for (int j = 0; j < n; ++j)
      srcs[size_t(j)] =
          at(slots[size_t(j)].collective.send, rank * c.count, c.dtype);
    void *dst = staging ? staging : c.recv;
    reduceRankOrder(c.dtype, c.op, n, srcs.data(), n, &dst, 1, c.count);
    return;
  }
  case Collective::Kind::AllReduce: {
    Chunk chunk = chunkOf(c.count, n, rank);
    std::vector<void *> dsts(size_t(n), nullptr);
    for (int j = 0; j < n; ++j) {
      srcs[size_t(j)] =
          at(slots[size_t(j)].collective.send, chunk.begin, c.dtype);
      dsts[size_t(j)] =
          at(slots[size_t(j)].collective.recv, chunk.begin, c.dtype);
    }
    reduceRankOrder(c.dtype, c.op, n, srcs.data(), n, dsts.data(), n,
                    chunk.length);
    return;
  }
  case Collective::Kind::Barrier:
    return;
  }
}

std::chrono::steady_clock::time_point LocalGroup::execute(int rank,
                                                          const Collective &c) {
  if (size() == 1) {
    // Alone: every collective is a copy (through the reduction, so that bf16
    // and f16 behave as in larger groups); nothing to wait for.
    slots[0].collective = c;
    work(0, c, nullptr);
    return std::chrono::steady_clock::now();
  }
  slots[size_t(rank)].collective = c;
  barrier.arriveAndWait();
  auto allArrived = std::chrono::steady_clock::now();
  std::string mismatch = disagreement();
  std::optional<CommBuffer> staging;
  if (mismatch.empty()) {
    if (c.kind == Collective::Kind::ReduceScatter && c.inPlace && c.count)
      staging.emplace(c.memCtx, uint64_t(c.count) * commDTypeSize(c.dtype));
    work(rank, c, staging ? staging->data() : nullptr);
  }
  barrier.arriveAndWait();
  if (!mismatch.empty())
    fail(std::string("local ") + collectiveName(c.kind) + ": " + mismatch);
  if (staging)
    std::memcpy(c.recv, staging->data(),
                size_t(c.count) * commDTypeSize(c.dtype));
  return allArrived;
}

std::shared_ptr<LocalGroup> LocalGroup::split(int rank, int color, int key,
                                              int *newRank) {
  *newRank = -1;
  if (size() == 1) {
    if (color < 0)
      return nullptr;
    *newRank = 0;
    return std::make_shared<LocalGroup>(1, emulatedLink);
  }
  slots[size_t(rank)].color = color;
  slots[size_t(rank)].key = key;
  barrier.arriveAndWait();
  std::vector<int> members;
  if (color >= 0) {
    for (int j = 0; j < size(); ++j)
      if (slots[size_t(j)].color == color)
        members.push_back(j);
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
      return slots[size_t(a)].key < slots[size_t(b)].key;
    });
    *newRank =
        int(std::find(members.begin(), members.end(), rank) - members.begin());
    if (members.front() == rank)
      slots[size_t(rank)].made =
          std::make_shared<LocalGroup>(int(members.size()), emulatedLink);
  }
  barrier.arriveAndWait();
  std::shared_ptr<LocalGroup> group;
  if (color >= 0)
    group = slots[size_t(members.front())].made;
  barrier.arriveAndWait();
  slots[size_t(rank)].made.reset();
  return group;
}
