//===- Team.cpp - The ranks of a zshard-run run, seen from one ------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard-run's own collectives are the step collectives of the C ABI on the
// control grid: all-gathers of i32 words, which copy bytes exactly.
//
//===----------------------------------------------------------------------===//

#include "Team.h"

#include <algorithm>
#include <new>

using namespace zshard;
using namespace zshard::run;

namespace {

/// Makes \p grid current on this thread for the scope's length.
class CurrentGrid {
public:
  explicit CurrentGrid(zshard_rt_grid *grid)
      : previous(zshard_rt_current_grid()) {
    zshard_rt_set_current_grid(grid);
  }
  ~CurrentGrid() { zshard_rt_set_current_grid(previous); }
  CurrentGrid(const CurrentGrid &) = delete;
  CurrentGrid &operator=(const CurrentGrid &) = delete;

private:
  zshard_rt_grid *previous;
};

[[noreturn]] void failWithLastError(const std::string &what) {
  rt::fail(what + ": " + zshard_rt_last_error_message());
}

} // namespace

Team::Team(zshard_rt_comm *comm, bool printing)
    : comm(comm), printing(printing) {
  if (!comm)
    return;
  int32_t rank = 0, size = 1;
  if (zshard_rt_comm_rank(comm, &rank) != ZSHARD_RT_OK ||
      zshard_rt_comm_size(comm, &size) != ZSHARD_RT_OK)
    failWithLastError("cannot query the communicator");
  rankId = rank;
  numRanks = size;
  if (numRanks == 1)
    return;
  int64_t shape[1] = {numRanks};
  if (zshard_rt_grid_create(comm, 1, shape, &control) != ZSHARD_RT_OK)
    failWithLastError("cannot build the control grid");
}

Team::~Team() {
  if (zshard_rt_current_grid() == artifactGrid)
    zshard_rt_set_current_grid(nullptr);
  zshard_rt_grid_destroy(artifactGrid);
  zshard_rt_grid_destroy(control);
}

std::vector<unsigned char> Team::allGather(const void *data, size_t bytes) {
  std::vector<unsigned char> out(bytes * size_t(numRanks));
  if (numRanks == 1) {
    if (bytes)
      std::memcpy(out.data(), data, bytes);
    return out;
  }
  size_t words = (bytes + 3) / 4;
  std::vector<int32_t> send(words), recv(words * size_t(numRanks));
  if (bytes)
    std::memcpy(send.data(), data, bytes);
  {
    CurrentGrid scope(control);
    zshard_rt_step_all_gather(1, send.data(), recv.data(), int64_t(words),
                              ZSHARD_RT_COMM_I32);
  }
  for (size_t r = 0; r < size_t(numRanks); ++r)
    if (bytes)
      std::memcpy(out.data() + r * bytes, recv.data() + r * words, bytes);
  return out;
}

std::optional<std::string>
Team::agree(const std::optional<std::string> &error) {
  if (numRanks == 1)
    return error;
  // Lengths first (-1: no failure), then the messages, padded alike.
  int64_t length = error ? int64_t(error->size()) : -1;
  std::vector<int64_t> lengths = allGatherValue(length);
  int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  if (longest < 0)
    return std::nullopt;
  std::vector<char> mine(size_t(longest), '\0');
  if (error)
    std::memcpy(mine.data(), error->data(), error->size());
  std::vector<unsigned char> all = allGather(mine.data(), mine.size());
  for (size_t r = 0; r < lengths.size(); ++r)
    if (lengths[r] >= 0)
      return std::string(reinterpret_cast<const char *>(all.data()) +
                             r * size_t(longest),
                         size_t(lengths[r]));
  return std::nullopt;
}

void Team::check(const std::function<void()> &body) {
  if (numRanks == 1) {
    body();
    return;
  }
  std::optional<std::string> error;
  try {
    body();
  } catch (const std::bad_alloc &) {
    error = "out of memory";
  } catch (const std::exception &e) {
    error = e.what();
  }
  if (std::optional<std::string> agreed = agree(error))
    throw AgreedFailure(*agreed, !printing);
}

void Team::createGrid(const std::vector<int64_t> &shape) {
  if (!comm)
    rt::fail("internal error: a sharded artifact needs a communicator");
  if (zshard_rt_grid_create(comm, int32_t(shape.size()), shape.data(),
                            &artifactGrid) != ZSHARD_RT_OK)
    failWithLastError("cannot build the artifact's grid");
  zshard_rt_set_current_grid(artifactGrid);
}

void Team::gatherShards(int64_t axesMask, const void *shard, void *full,
                        uint64_t shardBytes) {
  // A copy of bytes: as i32 words when they divide, else as 16-bit halves.
  int32_t dtype = ZSHARD_RT_COMM_I32;
  uint64_t count = shardBytes / 4;
  if (shardBytes % 4 != 0) {
    if (shardBytes % 2 != 0)
      rt::fail("cannot gather a shard of " + std::to_string(shardBytes) +
               " bytes (not a whole number of 16-bit words)");
    dtype = ZSHARD_RT_COMM_F16;
    count = shardBytes / 2;
  }
  CurrentGrid scope(artifactGrid);
  zshard_rt_step_all_gather(axesMask, shard, full, int64_t(count), dtype);
}
