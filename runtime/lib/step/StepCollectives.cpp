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
//===----------------------------------------------------------------------===//

#include "comm/CommHandles.h"
#include "core/Failure.h"
#include "step/Fatal.h"

#include "zshard/runtime/zshard_rt.h"

#include <new>
#include <unordered_map>
#include <utility>

using namespace zshard::rt;

namespace {

/// The calling thread's started collectives, by handle.
struct PendingCollectives {
  int64_t nextHandle = 1;
  std::unordered_map<int64_t, Request> requests;
};
thread_local PendingCollectives pending;

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

int64_t keep(Request request) {
  int64_t handle = pending.nextHandle++;
  pending.requests.emplace(handle, std::move(request));
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
  guarded(entry, [&] { comm.allGather(send, recv, countPerRank, type); });
}

extern "C" void zshard_rt_step_reduce_scatter(int64_t axesMask,
                                              const void *send, void *recv,
                                              int64_t countPerRank,
                                              int32_t dtype, int32_t op) {
  const char *entry = "zshard_rt_step_reduce_scatter";
  Communicator &comm = group(entry, axesMask);
  CommDType type = dtypeOf(entry, dtype);
  ReduceOp reduction = opOf(entry, op);
  guarded(entry, [&] {
    comm.reduceScatter(send, recv, countPerRank, type, reduction);
  });
}

extern "C" void zshard_rt_step_all_reduce(int64_t axesMask, const void *send,
                                          void *recv, int64_t count,
                                          int32_t dtype, int32_t op) {
  const char *entry = "zshard_rt_step_all_reduce";
  Communicator &comm = group(entry, axesMask);
  CommDType type = dtypeOf(entry, dtype);
  ReduceOp reduction = opOf(entry, op);
  guarded(entry, [&] { comm.allReduce(send, recv, count, type, reduction); });
}

extern "C" int64_t zshard_rt_step_all_gather_start(int64_t axesMask,
                                                   const void *send, void *recv,
                                                   int64_t countPerRank,
                                                   int32_t dtype) {
  const char *entry = "zshard_rt_step_all_gather_start";
  Communicator &comm = group(entry, axesMask);
  CommDType type = dtypeOf(entry, dtype);
  return guarded(entry, [&] {
    return keep(comm.startAllGather(send, recv, countPerRank, type));
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
        comm.startReduceScatter(send, recv, countPerRank, type, reduction));
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
    return keep(comm.startAllReduce(send, recv, count, type, reduction));
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
  Request request = std::move(it->second);
  pending.requests.erase(it);
  guarded(entry, [&] { request.wait(); });
}

extern "C" int64_t zshard_rt_step_pending_collectives(void) {
  return int64_t(pending.requests.size());
}
