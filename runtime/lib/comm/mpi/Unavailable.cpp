//===- Unavailable.cpp - MPI entries of a build without MPI ---------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/Error.h"

#include <string>

using namespace zshard::rt;

namespace {
zshard_rt_status notBuilt(const char *entry) {
  return setError(ZSHARD_RT_ERROR_UNAVAILABLE,
                  std::string(entry) +
                      ": the zshard runtime was built without MPI "
                      "(ZSHARD_ENABLE_MPI=OFF)");
}
} // namespace

extern "C" zshard_rt_status zshard_rt_mpi_init(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  return notBuilt("zshard_rt_mpi_init");
}

extern "C" zshard_rt_status zshard_rt_mpi_world(int *rank, int *size) {
  if (!rank)
    return nullArgument("zshard_rt_mpi_world", "rank");
  if (!size)
    return nullArgument("zshard_rt_mpi_world", "size");
  *rank = 0;
  *size = 0;
  return notBuilt("zshard_rt_mpi_world");
}

extern "C" zshard_rt_status zshard_rt_mpi_finalize(void) {
  return notBuilt("zshard_rt_mpi_finalize");
}

extern "C" zshard_rt_status zshard_rt_mpi_comm_create(zshard_rt_comm **out) {
  if (!out)
    return nullArgument("zshard_rt_mpi_comm_create", "out");
  *out = nullptr;
  return notBuilt("zshard_rt_mpi_comm_create");
}
