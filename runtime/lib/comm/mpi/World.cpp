//===- World.cpp - MPI process setup and world queries --------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// What the MPI backend needs before any collective: MPI initialized once per
// process, and this process's place in MPI_COMM_WORLD. The runtime finalizes
// MPI only if it initialized it.
//
//===----------------------------------------------------------------------===//

#include "core/Error.h"

#include <mpi.h>

#include <atomic>
#include <string>

using namespace zshard::rt;

namespace {

/// Whether zshard_rt_mpi_init() initialized MPI (and so owns finalizing it).
std::atomic<bool> runtimeOwnsMpi{false};

zshard_rt_status mpiFailure(const char *entry, const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    length = 0;
  return setError(ZSHARD_RT_ERROR_COMMUNICATION,
                  std::string(entry) + ": " + call + " failed: " +
                      std::string(text, static_cast<size_t>(length)));
}

zshard_rt_status requireInitialized(const char *entry) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    return setError(ZSHARD_RT_ERROR_COMMUNICATION,
                    std::string(entry) + ": MPI is not initialized" +
                        (finalized ? " (already finalized)" : ""));
  return ZSHARD_RT_OK;
}

} // namespace

extern "C" zshard_rt_status zshard_rt_mpi_init(int *argc, char ***argv) {
  const char *entry = "zshard_rt_mpi_init";
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    return setError(ZSHARD_RT_ERROR_COMMUNICATION,
                    std::string(entry) +
                        ": MPI was finalized and cannot be initialized again");
  if (initialized)
    return ZSHARD_RT_OK;
  int provided = 0;
  int code = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (code != MPI_SUCCESS)
    return mpiFailure(entry, "MPI_Init_thread", code);
  runtimeOwnsMpi = true;
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status zshard_rt_mpi_world(int *rank, int *size) {
  const char *entry = "zshard_rt_mpi_world";
  if (!rank)
    return nullArgument(entry, "rank");
  if (!size)
    return nullArgument(entry, "size");
  *rank = 0;
  *size = 0;
  if (zshard_rt_status s = requireInitialized(entry))
    return s;
  int worldRank = 0, worldSize = 0;
  if (int code = MPI_Comm_rank(MPI_COMM_WORLD, &worldRank))
    return mpiFailure(entry, "MPI_Comm_rank", code);
  if (int code = MPI_Comm_size(MPI_COMM_WORLD, &worldSize))
    return mpiFailure(entry, "MPI_Comm_size", code);
  *rank = worldRank;
  *size = worldSize;
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status zshard_rt_mpi_finalize(void) {
  if (!runtimeOwnsMpi.exchange(false))
    return ZSHARD_RT_OK;
  if (int code = MPI_Finalize())
    return mpiFailure("zshard_rt_mpi_finalize", "MPI_Finalize", code);
  return ZSHARD_RT_OK;
}
