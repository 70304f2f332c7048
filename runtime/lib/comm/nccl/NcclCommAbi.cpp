//===- NcclCommAbi.cpp - C ABI of the NCCL backend ------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard_rt_nccl_comm_create: where this rank sits and how rank 0's
// ncclUniqueId reaches the others.
//
//  - Under MPI (built with MPI, and MPI initialized by the launcher): rank
//    and size of MPI_COMM_WORLD, the id broadcast with MPI_Bcast.
//  - Otherwise: ZSHARD_RANK and ZSHARD_WORLD_SIZE (both unset: rank 0 of 1),
//    and for more than one rank the file rendezvous at ZSHARD_NCCL_ID_FILE
//    (comm/nccl/FileRendezvous.h), waiting at most the collective timeout.
//
//===----------------------------------------------------------------------===//

#include "comm/CollectiveTimeout.h"
#include "comm/CommHandles.h"
#include "comm/nccl/FileRendezvous.h"
#include "comm/nccl/NcclCommunicator.h"
#include "core/Error.h"
#include "core/Failure.h"
#include "device/DeviceHandle.h"

#include "zshard/runtime/zshard_rt_config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#if ZSHARD_HAS_MPI
#include <mpi.h>
#endif

using namespace zshard::rt;

namespace {

constexpr const char *entry = "zshard_rt_nccl_comm_create";

/// Where this rank sits, and rank 0's id.
struct Membership {
  int rank = 0;
  int size = 1;
  ncclUniqueId id;
};

void newId(ncclUniqueId &id) {
  ncclResult_t result = ncclGetUniqueId(&id);
  if (result != ncclSuccess)
    fail(std::string("ncclGetUniqueId failed: ") + ncclGetErrorString(result));
}

#if ZSHARD_HAS_MPI
bool underMpi() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

Membership joinOverMpi() {
  Membership m;
  MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m.size);
  std::memset(&m.id, 0, sizeof(m.id));
  if (m.rank == 0)
    newId(m.id);
  if (int code =
          MPI_Bcast(&m.id, int(sizeof(m.id)), MPI_BYTE, 0, MPI_COMM_WORLD))
    fail("nccl rendezvous: MPI_Bcast of the ncclUniqueId failed (MPI error " +
         std::to_string(code) + ")");
  return m;
}
#endif

/// The non-negative integer in environment variable \p name, or -1 unset.
int envInt(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return -1;
  errno = 0;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end != '\0' || errno == ERANGE || value < 0 || value > 1 << 24)
    fail(std::string(name) + "='" + text + "' is not a non-negative integer");
  return int(value);
}

Membership joinThroughFile() {
  Membership m;
  int rank = envInt("ZSHARD_RANK"), size = envInt("ZSHARD_WORLD_SIZE");
  if ((rank < 0) != (size < 0))
    fail("nccl rendezvous: set both ZSHARD_RANK and ZSHARD_WORLD_SIZE (or "
         "neither, for one rank), or launch under mpirun");
  if (size == 0 || (size > 0 && rank >= size))
    fail("nccl rendezvous: ZSHARD_RANK=" + std::to_string(rank) +
         " is not a rank of ZSHARD_WORLD_SIZE=" + std::to_string(size));
  m.rank = rank < 0 ? 0 : rank;
  m.size = size < 0 ? 1 : size;
  if (m.size == 1) {
    newId(m.id);
    return m;
  }
  const char *path = std::getenv("ZSHARD_NCCL_ID_FILE");
  if (!path || !*path)
    fail("nccl rendezvous: " + std::to_string(m.size) +
         " ranks without MPI need ZSHARD_NCCL_ID_FILE (a file path every "
         "rank of this machine names alike), or launch under mpirun");
  if (m.rank == 0) {
    newId(m.id);
    publishRendezvousId(
        path, m.size,
        std::vector<char>(m.id.internal, m.id.internal + sizeof(m.id)));
  } else {
    std::vector<char> bytes = awaitRendezvousId(path, m.size, sizeof(m.id),
                                                collectiveTimeoutSeconds());
    std::memcpy(m.id.internal, bytes.data(), sizeof(m.id));
  }
  return m;
}

} // namespace

extern "C" zshard_rt_status zshard_rt_nccl_comm_create(zshard_rt_device *device,
                                                       zshard_rt_comm **out) {
  if (!out)
    return nullArgument(entry, "out");
  *out = nullptr;
  if (!device)
    return nullArgument(entry, "device");
  auto *cuda = dynamic_cast<CudaDevice *>(device->device.get());
  if (!cuda)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": device " + device->device->name() +
                        " is not a CUDA device (NCCL runs on GPUs)");
  try {
    Membership m;
    bool fromFile = true;
#if ZSHARD_HAS_MPI
    if (underMpi()) {
      m = joinOverMpi();
      fromFile = false;
    }
#endif
    if (fromFile)
      m = joinThroughFile();
    auto comm = std::make_unique<zshard_rt_comm>();
    comm->owned =
        std::make_unique<NcclCommunicator>(*cuda, m.rank, m.size, m.id);
    comm->comm = comm->owned.get();
    // Every rank has joined: the id file is no longer needed.
    const char *path = std::getenv("ZSHARD_NCCL_ID_FILE");
    if (fromFile && m.rank == 0 && m.size > 1 && path)
      removeRendezvousFile(path);
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
