//===- Communicator.h - Collectives behind one interface --------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The communicator every backend implements: a group of \c size() ranks, this
/// one being \c rank(), and the collectives sharded steps need. One thread uses
/// a communicator at a time (a rank's thread); collectives are called by every
/// rank of the group in the same order.
///
/// Buffers hold \c count elements of a CommDType, densely:
///  - allGather: \p send has countPerRank elements, \p recv size() *
///    countPerRank: rank j's elements land at [j*countPerRank, ...).
///    In place: send == recv + rank() * countPerRank elements.
///  - reduceScatter: \p send has size() * countPerRank elements, \p recv
///    countPerRank: rank r gets elements [r*countPerRank, (r+1)*countPerRank)
///    of the reduction. In place: send == recv (the result overwrites the
///    first countPerRank elements).
///  - allReduce: \p send and \p recv have count elements. In place: send ==
///    recv.
/// Other overlaps of send and recv are errors. Reductions are deterministic
/// and identical on every rank: each element is reduced in rank order 0..N-1
/// (see comm/Reduce.h), so results are bitwise equal across ranks, runs and
/// backends. avg is not defined for i32.
///
/// start*() returns at once; the collective runs on the communicator's
/// progress thread, after the collectives started before it, while the caller
/// computes. Blocking calls first wait for every started collective, so a
/// communicator's collectives always run in call order. Misuse (a bad count,
/// dtype or buffer) throws a Failure in the caller before anything is sent.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_COMMUNICATOR_H
#define ZSHARD_RUNTIME_LIB_COMM_COMMUNICATOR_H

#include "comm/CommTypes.h"
#include "comm/Request.h"

#include "zshard/runtime/zshard_rt.h"

#include <cstdint>
#include <memory>

namespace zshard::rt {

class ProgressQueue;

/// One collective as a backend runs it, after Communicator has checked it.
struct Collective {
  enum class Kind { AllGather, ReduceScatter, AllReduce, Barrier };

  Kind kind = Kind::Barrier;
  const void *send = nullptr;
  void *recv = nullptr;
  /// Per rank for AllGather and ReduceScatter; the total for AllReduce.
  int64_t count = 0;
  CommDType dtype = CommDType::F32;
  ReduceOp op = ReduceOp::Sum;
  /// Whether send and recv are the in-place pair described above.
  bool inPlace = false;
  /// Charged for the backend's scratch buffers (see CommBuffer): the context
  /// current on the thread that called or started the collective.
  zshard_rt_mem_ctx *memCtx = nullptr;
  /// Where the collective's span goes (the communication lane), and the unit
  /// it is named by: the trace and unit current on the thread that called or
  /// started it (zshard_rt_set_current_trace, _step_set_collective_unit).
  zshard_rt_trace *trace = nullptr;
  int32_t unit = -1;
};

/// "allGather", "reduceScatter", "allReduce", "barrier".
const char *collectiveName(Collective::Kind kind);

/// The part of [0, count) rank \p rank of \p size handles when a collective is
/// split into balanced chunks: [begin, begin + length).
struct Chunk {
  int64_t begin;
  int64_t length;
};
Chunk chunkOf(int64_t count, int size, int rank);

class Communicator {
public:
  virtual ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "local" or "mpi".
  virtual const char *backend() const = 0;

  void allGather(const void *send, void *recv, int64_t countPerRank,
                 CommDType dtype);
  void reduceScatter(const void *send, void *recv, int64_t countPerRank,
                     CommDType dtype, ReduceOp op);
  void allReduce(const void *send, void *recv, int64_t count, CommDType dtype,
                 ReduceOp op);
  void barrier();

  Request startAllGather(const void *send, void *recv, int64_t countPerRank,
                         CommDType dtype);
  Request startReduceScatter(const void *send, void *recv, int64_t countPerRank,
                             CommDType dtype, ReduceOp op);
  Request startAllReduce(const void *send, void *recv, int64_t count,
                         CommDType dtype, ReduceOp op);

  /// Collective over this group, as MPI_Comm_split: the ranks that pass the
  /// same \p color form a new communicator, ordered by (\p key, rank()). A
  /// negative color takes no part and gets nullptr. Waits for the started
  /// collectives first.
  std::unique_ptr<Communicator> split(int color, int key);

  /// Blocks until every started collective has finished (their failures stay
  /// with their requests).
  void finishPending();

protected:
  Communicator();

  /// Runs \p collective to completion. Called on the caller's thread or the
  /// progress thread, never two at a time. Throws a Failure on error. A
  /// device backend (NCCL) may instead queue it on a device stream that the
  /// caller's later device work waits for: complete as far as that work can
  /// tell.
  virtual void run(const Collective &collective) = 0;
  /// Starts \p collective. The default queues run() on the progress thread;
  /// a backend whose collectives are asynchronous by nature (NCCL, on
  /// streams) overrides it and returns a Request of its own.
  virtual Request startCollective(const Collective &collective);
  virtual std::unique_ptr<Communicator> splitGroup(int color, int key) = 0;

  /// Finishes the started collectives and stops the progress thread. Every
  /// backend's destructor calls it first, so that nothing runs on a
  /// half-destroyed communicator.
  void stopProgress();

private:
  Collective describe(Collective::Kind kind, const void *send, void *recv,
                      int64_t count, CommDType dtype, ReduceOp op) const;
  void runNow(const Collective &collective);
  Request start(const Collective &collective);
  /// run(), recording its span in the collective's trace when it has one.
  void runTraced(const Collective &collective, bool started);

  std::unique_ptr<ProgressQueue> progress;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_COMMUNICATOR_H
