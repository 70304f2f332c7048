//===- Communicator.cpp - Checks and ordering of collectives --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/Communicator.h"

#include "comm/ProgressQueue.h"
#include "core/Failure.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

using namespace zshard::rt;

// Trace events carry Collective::Kind as a zshard_rt_collective_kind.
static_assert(int(Collective::Kind::AllGather) ==
                  ZSHARD_RT_COLLECTIVE_ALL_GATHER &&
              int(Collective::Kind::ReduceScatter) ==
                  ZSHARD_RT_COLLECTIVE_REDUCE_SCATTER &&
              int(Collective::Kind::AllReduce) ==
                  ZSHARD_RT_COLLECTIVE_ALL_REDUCE &&
              int(Collective::Kind::Barrier) == ZSHARD_RT_COLLECTIVE_BARRIER);

namespace {

bool overlaps(const void *a, uint64_t aBytes, const void *b, uint64_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return aBytes && bBytes && x < y + bBytes && y < x + aBytes;
}

} // namespace

const char *zshard::rt::collectiveName(Collective::Kind kind) {
  switch (kind) {
  case Collective::Kind::AllGather:
    return "allGather";
  case Collective::Kind::ReduceScatter:
    return "reduceScatter";
  case Collective::Kind::AllReduce:
    return "allReduce";
  case Collective::Kind::Barrier:
    return "barrier";
  }
  return "?";
}

Chunk zshard::rt::chunkOf(int64_t count, int size, int rank) {
  int64_t base = count / size, extra = count % size;
  return {rank * base + std::min<int64_t>(rank, extra),
          base + (rank < extra ? 1 : 0)};
}

Communicator::Communicator() = default;

Communicator::~Communicator() = default;

Collective Communicator::describe(Collective::Kind kind, const void *send,
                                  void *recv, int64_t count, CommDType dtype,
                                  ReduceOp op) const {
  std::string where =
      std::string(backend()) + " " + collectiveName(kind) + ": ";
  bool reduces = kind != Collective::Kind::AllGather;
  if (!isCommDType(int32_t(dtype)))
    fail(where + "dtype " + std::to_string(int32_t(dtype)) +
         " is not a collective dtype (0 f32, 1 bf16, 2 f16, 3 i32)");
  if (reduces && !isReduceOp(int32_t(op)))
    fail(where + "op " + std::to_string(int32_t(op)) +
         " is not a reduction (0 sum, 1 avg, 2 max)");
  if (reduces && !supportsReduction(dtype, op))
    fail(where + reduceOpName(op) + " is not defined for " +
         commDTypeName(dtype));
  if (count < 0)
    fail(where + "count " + std::to_string(count) + " is negative");

  const uint64_t elem = commDTypeSize(dtype), n = uint64_t(size());
  if (uint64_t(count) >
      uint64_t(std::numeric_limits<int64_t>::max()) / (elem * n))
    fail(where + "count " + std::to_string(count) + " overflows the buffers");
  uint64_t sendBytes = uint64_t(count) * elem, recvBytes = sendBytes;
  if (kind == Collective::Kind::AllGather)
    recvBytes *= n;
  else if (kind == Collective::Kind::ReduceScatter)
    sendBytes *= n;
  if (count > 0 && !send)
    fail(where + "send is NULL");
  if (count > 0 && !recv)
    fail(where + "recv is NULL");

  Collective collective;
  collective.kind = kind;
  collective.send = send;
  collective.recv = recv;
  collective.count = count;
  collective.dtype = dtype;
  collective.op = op;
  collective.memCtx = zshard_rt_current_mem_ctx();
  collective.trace = zshard_rt_current_trace();
  collective.unit = zshard_rt_step_collective_unit();
  const char *inPlaceSend = static_cast<const char *>(recv);
  if (kind == Collective::Kind::AllGather)
    inPlaceSend += uint64_t(rank()) * sendBytes;
  collective.inPlace = count > 0 && send == inPlaceSend;
  if (!collective.inPlace && overlaps(send, sendBytes, recv, recvBytes))
    fail(where + "send and recv overlap without being in place (" +
         (kind == Collective::Kind::AllGather
              ? "send == recv + rank * countPerRank"
              : "send == recv") +
         ")");
  return collective;
}

void Communicator::runNow(const Collective &collective) {
  finishPending();
  runTraced(collective, false);
}

Request Communicator::start(const Collective &collective) {
  return startCollective(collective);
}

Request Communicator::startCollective(const Collective &collective) {
  if (!progress)
    progress = std::make_unique<ProgressQueue>();
  return Request(
      progress->submit([this, collective] { runTraced(collective, true); }));
}

void Communicator::runTraced(const Collective &collective, bool started) {
  if (!collective.trace)
    return run(collective);
  zshard_rt_trace_event event;
  event.lane = ZSHARD_RT_TRACE_COMMUNICATION;
  event.kind = int32_t(collective.kind); // the same codes
  event.unit = collective.unit;
  event.started = started ? 1 : 0;
  event.bytes = uint64_t(collective.count) * commDTypeSize(collective.dtype);
  if (collective.kind == Collective::Kind::AllGather ||
      collective.kind == Collective::Kind::ReduceScatter)
    event.bytes *= uint64_t(size());
  event.begin = zshard_rt_clock_seconds();
  run(collective);
  event.end = zshard_rt_clock_seconds();
  zshard_rt_trace_record(collective.trace, &event); // best effort
}

void Communicator::allGather(const void *send, void *recv, int64_t countPerRank,
                             CommDType dtype) {
  runNow(describe(Collective::Kind::AllGather, send, recv, countPerRank, dtype,
                  ReduceOp::Sum));
}

void Communicator::reduceScatter(const void *send, void *recv,
                                 int64_t countPerRank, CommDType dtype,
                                 ReduceOp op) {
  runNow(describe(Collective::Kind::ReduceScatter, send, recv, countPerRank,
                  dtype, op));
}

void Communicator::allReduce(const void *send, void *recv, int64_t count,
                             CommDType dtype, ReduceOp op) {
  runNow(describe(Collective::Kind::AllReduce, send, recv, count, dtype, op));
}

void Communicator::barrier() {
  runNow(describe(Collective::Kind::Barrier, nullptr, nullptr, 0,
                  CommDType::F32, ReduceOp::Sum));
}

Request Communicator::startAllGather(const void *send, void *recv,
                                     int64_t countPerRank, CommDType dtype) {
  return start(describe(Collective::Kind::AllGather, send, recv, countPerRank,
                        dtype, ReduceOp::Sum));
}

Request Communicator::startReduceScatter(const void *send, void *recv,
                                         int64_t countPerRank, CommDType dtype,
                                         ReduceOp op) {
  return start(describe(Collective::Kind::ReduceScatter, send, recv,
                        countPerRank, dtype, op));
}

Request Communicator::startAllReduce(const void *send, void *recv,
                                     int64_t count, CommDType dtype,
                                     ReduceOp op) {
  return start(
      describe(Collective::Kind::AllReduce, send, recv, count, dtype, op));
}

std::unique_ptr<Communicator> Communicator::split(int color, int key) {
  finishPending();
  return splitGroup(color, key);
}

void Communicator::finishPending() {
  if (progress)
    progress->drain();
}

void Communicator::stopProgress() { progress.reset(); }
