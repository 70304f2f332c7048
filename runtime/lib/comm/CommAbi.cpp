//===- CommAbi.cpp - C ABI of communicators and grids ---------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The launcher's side of the collectives: communicator queries, grids and the
// calling thread's current grid. Failures of the C++ layer (a Failure) become
// ZSHARD_RT_ERROR_INVALID_ARGUMENT or _COMMUNICATION with its message.
//
//===----------------------------------------------------------------------===//

#include "comm/CommHandles.h"
#include "core/Error.h"
#include "core/Failure.h"

#include <new>
#include <string>

using namespace zshard::rt;

static_assert(Grid::maxAxes == ZSHARD_RT_GRID_MAX_AXES,
              "zshard_rt.h and Grid disagree on the number of grid axes");
static_assert(int(CommDType::I32) == ZSHARD_RT_COMM_I32 &&
                  int(CommDType::BF16) == ZSHARD_RT_COMM_BF16 &&
                  int(ReduceOp::Max) == ZSHARD_RT_REDUCE_MAX &&
                  int(ReduceOp::Avg) == ZSHARD_RT_REDUCE_AVG,
              "zshard_rt.h and CommTypes.h disagree on the codes");

namespace {

/// The grid zshard_rt_set_current_grid() set on this thread.
thread_local zshard_rt_grid *currentGrid = nullptr;

} // namespace

extern "C" zshard_rt_status zshard_rt_comm_destroy(zshard_rt_comm *comm) {
  if (!comm)
    return ZSHARD_RT_OK;
  if (!comm->owned)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    "zshard_rt_comm_destroy: the communicator belongs to a "
                    "local world (destroy the world instead)");
  delete comm;
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status zshard_rt_comm_rank(const zshard_rt_comm *comm,
                                                int32_t *rank) {
  if (!comm)
    return nullArgument("zshard_rt_comm_rank", "comm");
  if (!rank)
    return nullArgument("zshard_rt_comm_rank", "rank");
  *rank = comm->comm->rank();
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status zshard_rt_comm_size(const zshard_rt_comm *comm,
                                                int32_t *size) {
  if (!comm)
    return nullArgument("zshard_rt_comm_size", "comm");
  if (!size)
    return nullArgument("zshard_rt_comm_size", "size");
  *size = comm->comm->size();
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status zshard_rt_grid_create(zshard_rt_comm *comm,
                                                  int32_t axes,
                                                  const int64_t *shape,
                                                  zshard_rt_grid **out) {
  const char *entry = "zshard_rt_grid_create";
  if (!out)
    return nullArgument(entry, "out");
  *out = nullptr;
  if (!comm)
    return nullArgument(entry, "comm");
  if (axes < 1 || axes > ZSHARD_RT_GRID_MAX_AXES)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": " + std::to_string(axes) +
                        " axes (needs 1 to " +
                        std::to_string(ZSHARD_RT_GRID_MAX_AXES) + ")");
  if (!shape)
    return nullArgument(entry, "shape");
  try {
    auto grid = std::make_unique<zshard_rt_grid>();
    grid->grid = std::make_unique<Grid>(
        *comm->comm, std::vector<int64_t>(shape, shape + axes));
    *out = grid.release();
    return ZSHARD_RT_OK;
  } catch (const std::bad_alloc &) {
    return setError(ZSHARD_RT_ERROR_OUT_OF_MEMORY,
                    std::string(entry) + ": out of memory");
  } catch (const Failure &failure) {
    // The shape checks come before any communication; what fails later is
    // the backend.
    std::string message = failure.what();
    zshard_rt_status status = message.rfind("grid ", 0) == 0
                                  ? ZSHARD_RT_ERROR_INVALID_ARGUMENT
                                  : ZSHARD_RT_ERROR_COMMUNICATION;
    return setError(status, std::string(entry) + ": " + message);
  }
}

extern "C" void zshard_rt_grid_destroy(zshard_rt_grid *grid) {
  if (!grid)
    return;
  if (currentGrid == grid)
    currentGrid = nullptr;
  grid->grid->finishPending();
  delete grid;
}

extern "C" void zshard_rt_set_current_grid(zshard_rt_grid *grid) {
  currentGrid = grid;
}

extern "C" zshard_rt_grid *zshard_rt_current_grid(void) { return currentGrid; }
