//===- MpiCommunicator.h - Collectives over an MPI communicator -*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The MPI backend (only in builds with ZSHARD_HAS_MPI): one process per rank.
/// Data moves with MPI's collectives; where MPI would reduce in an order of its
/// own, the reduction is done here instead, in rank order, so results are
/// bitwise equal to the local backend's:
///
///  - all-gather: MPI_Iallgather (MPI_IN_PLACE when in place), any dtype.
///  - i32 sum and max (exact in any order): MPI_Ireduce_scatter_block and
///    MPI_Iallreduce.
///  - f32, bf16, f16 (RankOrder, the default): reduce-scatter is
///    MPI_Ialltoall of the segments, then reduceRankOrder; all-reduce is
///    MPI_Ialltoallv of chunk r to rank r, reduceRankOrder of the chunk, then
///    MPI_Iallgatherv of the chunks. Each rank sends (N-1)/N of the data per
///    phase, as a ring does.
///  - f32 with MpiReduction::Native: MPI_Ireduce_scatter_block /
///    MPI_Iallreduce with MPI_SUM or MPI_MAX (avg: the sum divided by N in
///    f32). Faster on some networks, but MPI chooses the order of the
///    additions: results may differ in the last bits across ranks counts and
///    from the local backend.
///
/// Every MPI collective is started non-blocking and completed by polling
/// MPI_Test (back to back for ~100 us, then sleeping 50-200 us between polls)
/// against one deadline per collective: the collective timeout,
/// ZSHARD_COLLECTIVE_TIMEOUT_S (comm/CollectiveTimeout.h). Past it the rank
/// prints one line and calls MPI_Abort(MPI_COMM_WORLD, 70), which ends every
/// process of the job, so a stuck or dead peer never hangs the others.
/// MPI_Comm_dup and MPI_Comm_split have no non-blocking form; a barrier with
/// the timeout runs before them.
///
/// Started collectives run on the communicator's progress thread (with the
/// same timeout), so MPI must provide MPI_THREAD_MULTIPLE (zshard_rt_mpi_init
/// asks for it).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_MPI_MPICOMMUNICATOR_H
#define ZSHARD_RUNTIME_LIB_COMM_MPI_MPICOMMUNICATOR_H

#include "comm/Communicator.h"

#include <mpi.h>

#include <chrono>

namespace zshard::rt {

/// How f32 reductions are done (see above); other dtypes ignore it.
enum class MpiReduction { RankOrder, Native };

class MpiCommunicator final : public Communicator {
public:
  /// A communicator over a duplicate of \p comm (the runtime's messages never
  /// match the caller's). Throws a Failure when MPI is not initialized or
  /// lacks MPI_THREAD_MULTIPLE. Collective over \p comm.
  explicit MpiCommunicator(
      MPI_Comm comm, MpiReduction floatReduction = MpiReduction::RankOrder);
  /// Frees the duplicate (MPI_Comm_free).
  ~MpiCommunicator() override;

  int rank() const override { return myRank; }
  int size() const override { return mySize; }
  const char *backend() const override { return "mpi"; }

protected:
  void run(const Collective &collective) override;
  std::unique_ptr<Communicator> splitGroup(int color, int key) override;

private:
  struct Adopt {};
  MpiCommunicator(Adopt, MPI_Comm owned, MpiReduction floatReduction);
  void init();

  using Clock = std::chrono::steady_clock;

  void runAllGather(const Collective &c, Clock::time_point began);
  void runReduceScatter(const Collective &c, Clock::time_point began);
  void runAllReduce(const Collective &c, Clock::time_point began);
  /// Whether MPI's own reduction serves \p c (integers always, f32 when
  /// asked for); otherwise the inputs are reduced here in rank order.
  bool reducesNatively(const Collective &c) const;
  /// Turns the sum a native reduction left in \p c's receive buffer
  /// (\p count elements) into the average, when \p c asked for one.
  void averageNativeSum(const Collective &c, int count) const;

  /// Completes \p request (a non-blocking collective \p what over \p group)
  /// by polling MPI_Test: back to back at first, then with short sleeps. Past
  /// \p began + the collective timeout it calls timedOut().
  void complete(MPI_Request &request, const char *what, MPI_Comm group,
                Clock::time_point began) const;
  /// Prints one line (the collective, the group size, the timeout) and ends
  /// the job: MPI_Abort(MPI_COMM_WORLD, 70).
  [[noreturn]] void timedOut(const char *what, MPI_Comm group) const;
  /// A barrier over \p group with the timeout, before the collective calls
  /// that have no non-blocking form (MPI_Comm_dup, MPI_Comm_split).
  void gate(MPI_Comm group, const char *what) const;

  MPI_Comm comm = MPI_COMM_NULL;
  MpiReduction floatReduction;
  /// The collective timeout in seconds (comm/CollectiveTimeout.h).
  double timeout;
  int myRank = 0;
  int mySize = 0;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_MPI_MPICOMMUNICATOR_H
