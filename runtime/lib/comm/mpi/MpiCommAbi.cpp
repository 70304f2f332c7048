//===- MpiCommAbi.cpp - C ABI of the MPI backend --------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/CommHandles.h"
#include "comm/mpi/MpiCommunicator.h"
#include "core/Error.h"
#include "core/Failure.h"

#include <new>
#include <string>

using namespace zshard::rt;

extern "C" zshard_rt_status zshard_rt_mpi_comm_create(zshard_rt_comm **out) {
  const char *entry = "zshard_rt_mpi_comm_create";
  if (!out)
    return nullArgument(entry, "out");
  *out = nullptr;
  try {
    auto comm = std::make_unique<zshard_rt_comm>();
    comm->owned = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD);
    comm->comm = comm->owned.get();
    *out = comm.release();
    return ZSHARD_RT_OK;
  } catch (const std::bad_alloc &) {
    return setError(ZSHARD_RT_ERROR_OUT_OF_MEMORY,
                    std::string(entry) + ": out of memory");
  } catch (const Failure &failure) {
    return setError(ZSHARD_RT_ERROR_COMMUNICATION,
                    std::string(entry) + ": " + failure.what());
  }
}
