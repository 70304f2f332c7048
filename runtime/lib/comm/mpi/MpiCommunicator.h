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
///  - all-gather: MPI_Allgather (MPI_IN_PLACE when in place), any dtype.
///  - i32 sum and max (exact in any order): MPI_Reduce_scatter_block and
///    MPI_Allreduce.
///  - f32, bf16, f16 (RankOrder, the default): reduce-scatter is MPI_Alltoall
///    of the segments, then reduceRankOrder; all-reduce is MPI_Alltoallv of
///    chunk r to rank r, reduceRankOrder of the chunk, then MPI_Allgatherv of
///    the chunks. Each rank sends (N-1)/N of the data per phase, as a ring
///    does.
///  - f32 with MpiReduction::Native: MPI_Reduce_scatter_block / MPI_Allreduce
///    with MPI_SUM or MPI_MAX (avg: the sum divided by N in f32). Faster on
///    some networks, but MPI chooses the order of the additions: results may
///    differ in the last bits across ranks counts and from the local backend.
///
/// Started collectives run on the communicator's progress thread with
/// blocking MPI calls, so MPI must provide MPI_THREAD_MULTIPLE
/// (zshard_rt_mpi_init asks for it).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_MPI_MPICOMMUNICATOR_H
#define ZSHARD_RUNTIME_LIB_COMM_MPI_MPICOMMUNICATOR_H

#include "comm/Communicator.h"

#include <mpi.h>

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

  void runAllGather(const Collective &c);
  void runReduceScatter(const Collective &c);
  void runAllReduce(const Collective &c);

  MPI_Comm comm = MPI_COMM_NULL;
  MpiReduction floatReduction;
  int myRank = 0;
  int mySize = 0;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_MPI_MPICOMMUNICATOR_H
