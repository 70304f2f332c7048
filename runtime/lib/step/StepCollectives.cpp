//===- StepCollectives.cpp - Collectives of compiled steps ----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard_rt_step_* collectives over groups of the calling thread's current
// grid. They cannot fail softly: misuse (and a failing backend) prints one
// line naming the entry and aborts. Started collectives are kept in a table
// of the calling thread, by handle.
//
// The time the calling thread is blocked (a blocking collective, a wait) is
// counted per thread, always (two clock reads per call), and recorded on the
// compute lane of the thread's current trace when there is one. The
// communication lane is recorded by the communicator (Communicator.cpp).
//
//===----------------------------------------------------------------------===//

#include "comm/CommHandles.h"
#include "core/Failure.h"
#include "step/Fatal.h"

#include "zshard/runtime/zshard_rt.h"

#include <chrono>
#include <new>
#include <unordered_map>
#include <utility>

using namespace zshard::rt;

namespace {

/// A started collective and what its wait is traced as.
struct PendingCollective {
  Request request;
  zshard_rt_collective_kind kind;
  int32_t unit;
  uint64_t bytes;
};

/// The calling thread's started collectives, by handle.
struct PendingCollectives {
  int64_t nextHandle = 1;
  std::unordered_map<int64_t, PendingCollective> requests;
};
thread_local PendingCollectives pending;

/// zshard_rt_step_set_collective_unit of this thread.
thread_local int32_t currentUnit = -1;

/// Time this thread spent blocked in collectives and waits, and how often.
struct WaitCounters {
  double seconds = 0;
  uint64_t calls = 0;
};
thread_local WaitCounters waits;

using Clock = std::chrono::steady_clock;

double toSeconds(Clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

/// What a collective of \p kind over \p comm moves, as traced: the gathered
/// buffer, the reduce-scatter input, the all-reduce buffer.
uint64_t tracedBytes(zshard_rt_collective_kind kind, const Communicator &comm,
                     int64_t count, CommDType dtype) {
  uint64_t bytes = uint64_t(count < 0 ? 0 : count) * commDTypeSize(dtype);
  return kind == ZSHARD_RT_COLLECTIVE_ALL_REDUCE
             ? bytes
             : bytes * uint64_t(comm.size());
}

/// Counts the time from \p begin to now as blocked and records it on the
/// compute lane of the current trace.
void blocked(Clock::time_point begin, zshard_rt_collective_kind kind,
             int32_t unit, bool started, uint64_t bytes) {
  Clock::time_point end = Clock::now();
  waits.seconds += std::chrono::duration<double>(end - begin).count();
  waits.calls += 1;
  if (zshard_rt_trace *trace = zshard_rt_current_trace()) {
    zshard_rt_trace_event event;
    event.lane = ZSHARD_RT_TRACE_COMPUTE;
    event.kind = kind;
    event.unit = unit;
    event.started = started ? 1 : 0;
    event.bytes = bytes;
    event.begin = toSeconds(begin);
    event.end = toSeconds(end);
    zshard_rt_trace_record(trace, &event); // best effort: drop when full
  }
}

Grid &currentGrid(const char *entry) {
  zshard_rt_grid *grid = zshard_rt_current_grid();
  if (!grid)
    stepFatal(entry, "no current grid on this thread (the launcher sets one "
                     "with zshard_rt_set_current_grid)");
  return *grid->grid;
}

int32_t checkedAxis(const char *entry, const Grid &grid, int32_t axis) {
  if (axis < 0 || axis >= grid.axes())
    stepFatal(entry, "axis %d is not an axis of the %d-axis grid", int(axis),
              grid.axes());
  return axis;
}

Communicator &group(const char *entry, int64_t axesMask) {
  Grid &grid = currentGrid(entry);
  if (axesMask < 0 || axesMask >= (int64_t(1) << grid.axes()))
    stepFatal(entry, "axes mask 0x%llx names an axis outside the %d-axis grid",
              static_cast<unsigned long long>(axesMask), grid.axes());
  return grid.group(uint64_t(axesMask));
}

CommDType dtypeOf(const char *entry, int32_t dtype) {
  if (!isCommDType(dtype))
    stepFatal(entry,
              "dtype %d is not a collective dtype (0 f32, 1 bf16, "
              "2 f16, 3 i32)",
              int(dtype));
  return CommDType(dtype);
}

ReduceOp opOf(const char *entry, int32_t op) {
  if (!isReduceOp(op))
    stepFatal(entry, "op %d is not a reduction (0 sum, 1 avg, 2 max)", int(op));
  return ReduceOp(op);
}

/// Runs \p body, turning what it throws into the entry's fatal error.
template <typename Body> auto guarded(const char *entry, Body body) {
  try {
    return body();
  } catch (const Failure &failure) {
    stepFatal(entry, "%s", failure.what());
  } catch (const std::bad_alloc &) {
    stepFatal(entry, "out of memory");
  }
}

int64_t keep(Request request, zshard_rt_collective_kind kind, uint64_t bytes) {
  int64_t handle = pending.nextHandle++;
  pending.requests.emplace(
      handle, PendingCollective{std::move(request), kind, currentUnit, bytes});
  return handle;
}

} // namespace

extern "C" int64_t zshard_rt_step_grid_coord(int32_t axis) {
  const char *entry = "zshard_rt_step_grid_coord";
  Grid &grid = currentGrid(entry);
  return grid.coords()[size_t(checkedAxis(entry, grid, axis))];
}

extern "C" int64_t zshard_rt_step_grid_size(int32_t axis) {
  const char *entry = "zshard_rt_step_grid_size";
  Grid &grid = currentGrid(entry);
  return grid.shape()[size_t(checkedAxis(entry, grid, axis))];
}

extern "C" void zshard_rt_step_all_gather(int64_t axesMask, const void *send,
                                          void *recv, int64_t countPerRank,
                                          int32_t dtype) {
  const char *entry = "zshard_rt_step_all_gather";
  Communicator &comm = group(entry, axesMask);
  CommDType type = dtypeOf(entry, dtype);
  Clock::time_point begin = Clock::now();
  guarded(entry, [&] { comm.allGather(send, recv, countPerRank, type); });
  blocked(
      begin, ZSHARD_RT_COLLECTIVE_ALL_GATHER, currentUnit, false,
      tracedBytes(ZSHARD_RT_COLLECTIVE_ALL_GATHER, comm, countPerRank, type));
}

extern "C" void zshard_rt_step_reduce_scatter(int64_t axesMask,
                                              const void *send, void *recv,
                                              int64_t countPerRank,
                                              int32_t dtype, int32_t op) {
  const char *entry = "zshard_rt_step_reduce_scatter";
  Communicator &comm = group(entry, axesMask);
  CommDType type = dtypeOf(entry, dtype);
  ReduceOp reduction = opOf(entry, op);
  Clock::time_point begin = Clock::now();
  guarded(entry, [&] {
    comm.reduceScatter(send, recv, countPerRank, type, reduction);
  });
  blocked(begin, ZSHARD_RT_COLLECTIVE_REDUCE_SCATTER, currentUnit, false,
          tracedBytes(ZSHARD_RT_COLLECTIVE_REDUCE_SCATTER, comm, countPerRank,
                      type));
}

extern "C" void zshard_rt_step_all_reduce(int64_t axesMask, const void *send,
                                          void *recv, int64_t count,
                                          int32_t dtype, int32_t op) {
  const char *entry = "zshard_rt_step_all_reduce";
  Communicator &comm = group(entry, axesMask);
  CommDType type = dtypeOf(entry, dtype);
  ReduceOp reduction = opOf(entry, op);
  Clock::time_point begin = Clock::now();
  guarded(entry, [&] { comm.allReduce(send, recv, count, type, reduction); });
  blocked(begin, ZSHARD_RT_COLLECTIVE_ALL_REDUCE, currentUnit, false,
          tracedBytes(ZSHARD_RT_COLLECTIVE_ALL_REDUCE, comm, count, type));
}

extern "C" int64_t zshard_rt_step_all_gather_start(int64_t axesMask,
                                                   const void *send, void *recv,
                                                   int64_t countPerRank,
                                                   int32_t dtype) {
  const char *entry = "zshard_rt_step_all_gather_start";
  Communicator &comm = group(entry, axesMask);
  CommDType type = dtypeOf(entry, dtype);
  return guarded(entry, [&] {
    return keep(
        comm.startAllGather(send, recv, countPerRank, type),
        ZSHARD_RT_COLLECTIVE_ALL_GATHER,
        tracedBytes(ZSHARD_RT_COLLECTIVE_ALL_GATHER, comm, countPerRank, type));
  });
}

extern "C" int64_t
zshard_rt_step_reduce_scatter_start(int64_t axesMask, const void *send,
                                    void *recv, int64_t countPerRank,
                                    int32_t dtype, int32_t op) {
  const char *entry = "zshard_rt_step_reduce_scatter_start";
  Communicator &comm = group(entry, axesMask);
  CommDType type = dtypeOf(entry, dtype);
  ReduceOp reduction = opOf(entry, op);
  return guarded(entry, [&] {
    return keep(
        comm.startReduceScatter(send, recv, countPerRank, type, reduction),
        ZSHARD_RT_COLLECTIVE_REDUCE_SCATTER,
        tracedBytes(ZSHARD_RT_COLLECTIVE_REDUCE_SCATTER, comm, countPerRank,
                    type));
  });
}

extern "C" int64_t zshard_rt_step_all_reduce_start(int64_t axesMask,
                                                   const void *send, void *recv,
                                                   int64_t count, int32_t dtype,
                                                   int32_t op) {
  const char *entry = "zshard_rt_step_all_reduce_start";
  Communicator &comm = group(entry, axesMask);
  CommDType type = dtypeOf(entry, dtype);
  ReduceOp reduction = opOf(entry, op);
  return guarded(entry, [&] {
    return keep(
        comm.startAllReduce(send, recv, count, type, reduction),
        ZSHARD_RT_COLLECTIVE_ALL_REDUCE,
        tracedBytes(ZSHARD_RT_COLLECTIVE_ALL_REDUCE, comm, count, type));
  });
}

extern "C" void zshard_rt_step_wait(int64_t handle) {
  const char *entry = "zshard_rt_step_wait";
  auto it = pending.requests.find(handle);
  if (it == pending.requests.end())
    stepFatal(entry,
              "handle %lld is not a pending collective of this thread "
              "(already waited for, or started on another thread)",
              static_cast<long long>(handle));
  PendingCollective started = std::move(it->second);
  pending.requests.erase(it);
  Clock::time_point begin = Clock::now();
  guarded(entry, [&] { started.request.wait(); });
  blocked(begin, started.kind, started.unit, true, started.bytes);
}

extern "C" int64_t zshard_rt_step_pending_collectives(void) {
  return int64_t(pending.requests.size());
}

extern "C" void zshard_rt_step_set_collective_unit(int32_t unitIndex) {
  if (unitIndex < -1)
    stepFatal("zshard_rt_step_set_collective_unit",
              "unit index %d is neither -1 (none) nor an index of the "
              "manifest's units",
              int(unitIndex));
  currentUnit = unitIndex;
}

extern "C" int32_t zshard_rt_step_collective_unit(void) { return currentUnit; }

extern "C" double zshard_rt_step_comm_wait_seconds(void) {
  return waits.seconds;
}

extern "C" uint64_t zshard_rt_step_comm_wait_calls(void) { return waits.calls; }

extern "C" void zshard_rt_step_comm_reset_counters(void) { waits = {}; }
