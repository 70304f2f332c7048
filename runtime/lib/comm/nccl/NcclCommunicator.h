//===- NcclCommunicator.h - Collectives over NCCL ---------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The NCCL backend (builds with NCCL): one rank per process and GPU, its
/// CudaDevice's streams. Buffers are device memory. Every collective is
/// ordered with the rank's compute stream by events, never by blocking the
/// host:
///
///  - it records an event on the compute stream and makes the communication
///    stream wait for it (the collective sees everything the step queued
///    before it), enqueues the NCCL call on the communication stream and
///    records a done event there;
///  - a blocking collective (allGather, ...) then makes the compute stream
///    wait for the done event and returns: later device work sees the
///    result; the host does not wait;
///  - a started one (startAllGather, ...) returns a Request whose wait()
///    makes the compute stream wait for the done event (again without
///    blocking the host), so compute queued between start and wait overlaps
///    the transfer.
///
/// Buffers that are not device memory (the launcher's own gathers of host
/// values) are staged through device memory charged to
/// ZSHARD_RT_MEM_COMMUNICATION, and those collectives block the host until
/// the result is back; started ones complete at once.
///
/// NCCL reduces in its own order (rings and trees): sums are deterministic
/// for a given rank count and topology but not the rank-order reduction of
/// the local and mpi backends, so results may differ from theirs in the last
/// bits. avg is ncclAvg, max ncclMax. In-place reduce-scatter (send == recv)
/// reduces into recv's own segment (NCCL's in-place form) and moves it to
/// the front. A barrier is a one-element all-reduce waited for on the host.
/// split() is ncclCommSplit. The collective timeout does not apply to NCCL
/// calls (a dead peer hangs them; NCCL's own watchdog variables apply).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_NCCL_NCCLCOMMUNICATOR_H
#define ZSHARD_RUNTIME_LIB_COMM_NCCL_NCCLCOMMUNICATOR_H

#include "comm/Communicator.h"
#include "cuda/CudaDevice.h"

#include <nccl.h>

#include <string>

namespace zshard::rt {

class NcclCommunicator final : public Communicator {
public:
  /// Rank \p rank of \p size over \p id (ncclCommInitRank, collective over
  /// the ranks), on \p device. Throws a Failure with ncclGetErrorString when
  /// it fails.
  NcclCommunicator(CudaDevice &device, int rank, int size,
                   const ncclUniqueId &id);
  /// Waits for the streams, then ncclCommDestroy.
  ~NcclCommunicator() override;

  int rank() const override { return myRank; }
  int size() const override { return mySize; }
  const char *backend() const override { return "nccl"; }

protected:
  void run(const Collective &collective) override;
  Request startCollective(const Collective &collective) override;
  std::unique_ptr<Communicator> splitGroup(int color, int key) override;

private:
  struct Adopt {};
  NcclCommunicator(Adopt, CudaDevice &device, ncclComm_t owned);

  /// Whether \p c's buffers are device memory (else it is staged).
  bool onDevice(const Collective &c) const;
  /// Queues \p c on the communication stream after the compute stream's
  /// work; returns the event recorded after it.
  cudaEvent_t enqueue(const Collective &c);
  /// The NCCL call of \p c with buffers \p send, \p recv, on \p stream.
  void call(const Collective &c, const void *send, void *recv,
            cudaStream_t stream);
  /// Runs \p c through device copies of its buffers and waits on the host.
  void runStaged(const Collective &c);
  void check(ncclResult_t result, const std::string &what) const;

  CudaDevice &device;
  ncclComm_t comm = nullptr;
  int myRank = 0;
  int mySize = 1;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_NCCL_NCCLCOMMUNICATOR_H
