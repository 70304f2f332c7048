//===- MpiCommunicator.cpp - Collectives over an MPI communicator ---------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/mpi/MpiCommunicator.h"

#include "comm/CollectiveTimeout.h"
#include "comm/CommBuffer.h"
#include "comm/Reduce.h"
#include "core/Failure.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace zshard::rt;

namespace {

[[noreturn]] void mpiFail(const std::string &where, const char *call,
                          int code) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    length = 0;
  fail(where + ": " + call + " failed: " + std::string(text, size_t(length)));
}

#define ZSHARD_MPI_CHECK(where, call)                                          \
  do {                                                                         \
    if (int code_ = (call); code_ != MPI_SUCCESS)                              \
      mpiFail(where, #call, code_);                                            \
  } while (0)

MPI_Datatype mpiType(CommDType dtype) {
  switch (dtype) {
  case CommDType::F32:
    return MPI_FLOAT;
  case CommDType::I32:
    return MPI_INT32_T;
  case CommDType::BF16:
  case CommDType::F16:
    break;
  }
  return MPI_UINT16_T; // moved, never reduced by MPI
}

std::string where(const Collective &c) {
  return std::string("mpi ") + collectiveName(c.kind);
}

/// MPI counts and displacements are int.
int mpiCount(const Collective &c, int64_t count) {
  if (count > INT_MAX)
    fail(where(c) + ": " + std::to_string(count) +
         " elements exceed MPI's limit of 2^31-1 per call");
  return int(count);
}

char *elementAt(void *base, int64_t index, CommDType dtype) {
  return static_cast<char *>(base) + index * int64_t(commDTypeSize(dtype));
}

/// How long a waiting rank polls MPI_Test back to back before it starts to
/// sleep between polls, and the sleeps (doubling from the first to the last):
/// short collectives finish at spin latency, long waits leave the core to
/// compute (the progress thread shares it with the rank's thread).
constexpr std::chrono::microseconds kSpinFor{100};
constexpr std::chrono::microseconds kFirstSleep{50};
constexpr std::chrono::microseconds kLongestSleep{200};

} // namespace

void MpiCommunicator::complete(MPI_Request &request, const char *what,
                               MPI_Comm group, Clock::time_point began) const {
  const Clock::time_point spinUntil = Clock::now() + kSpinFor;
  const Clock::time_point deadline =
      began + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(timeout));
  std::chrono::microseconds sleep = kFirstSleep;
  for (;;) {
    int flag = 0;
    ZSHARD_MPI_CHECK(std::string("mpi ") + what,
                     MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
    if (flag)
      return;
    Clock::time_point now = Clock::now();
    if (now < spinUntil)
      continue;
    if (now >= deadline)
      timedOut(what, group);
    std::this_thread::sleep_for(sleep);
    if (sleep < kLongestSleep)
      sleep = std::min(sleep * 2, kLongestSleep);
  }
}

void MpiCommunicator::timedOut(const char *what, MPI_Comm group) const {
  int groupSize = 0, groupRank = 0, worldRank = 0;
  MPI_Comm_size(group, &groupSize);
  MPI_Comm_rank(group, &groupRank);
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  std::fprintf(stderr,
               "zshard runtime: fatal: mpi %s waited %g s on a group of %d "
               "ranks (rank %d, world rank %d); a rank failed or is stuck "
               "(collective timeout, ZSHARD_COLLECTIVE_TIMEOUT_S); aborting "
               "the MPI job\n",
               what, timeout, groupSize, groupRank, worldRank);
  std::fflush(stderr);
  // Ends every process of the job, the stuck ones included.
  MPI_Abort(MPI_COMM_WORLD, kCollectiveTimeoutExitStatus);
  std::_Exit(kCollectiveTimeoutExitStatus); // MPI_Abort does not return
}

void MpiCommunicator::gate(MPI_Comm group, const char *what) const {
  MPI_Request request = MPI_REQUEST_NULL;
  Clock::time_point began = Clock::now();
  ZSHARD_MPI_CHECK(std::string("mpi ") + what, MPI_Ibarrier(group, &request));
  complete(request, what, group, began);
}

MpiCommunicator::MpiCommunicator(MPI_Comm parent, MpiReduction reduction)
    : floatReduction(reduction), timeout(collectiveTimeoutSeconds()) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    fail("mpi communicator: MPI is not initialized (call zshard_rt_mpi_init)");
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE)
    fail("mpi communicator: needs MPI_THREAD_MULTIPLE (collectives run on "
         "progress threads); MPI provides level " +
         std::to_string(provided));
  // MPI_Comm_dup has no timeout of its own: once every rank has passed the
  // gate, all of them are in the dup.
  gate(parent, "communicator (MPI_Comm_dup)");
  ZSHARD_MPI_CHECK("mpi communicator", MPI_Comm_dup(parent, &comm));
  init();
}

MpiCommunicator::MpiCommunicator(Adopt, MPI_Comm owned, MpiReduction reduction)
    : comm(owned), floatReduction(reduction),
      timeout(collectiveTimeoutSeconds()) {
  init();
}

void MpiCommunicator::init() {
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &myRank);
  MPI_Comm_size(comm, &mySize);
}

MpiCommunicator::~MpiCommunicator() {
  stopProgress();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm);
}

void MpiCommunicator::run(const Collective &c) {
  // One deadline for the whole collective, whatever its MPI phases.
  const Clock::time_point began = Clock::now();
  switch (c.kind) {
  case Collective::Kind::AllGather:
    return runAllGather(c, began);
  case Collective::Kind::ReduceScatter:
    return runReduceScatter(c, began);
  case Collective::Kind::AllReduce:
    return runAllReduce(c, began);
  case Collective::Kind::Barrier: {
    MPI_Request request = MPI_REQUEST_NULL;
    ZSHARD_MPI_CHECK(where(c), MPI_Ibarrier(comm, &request));
    complete(request, collectiveName(c.kind), comm, began);
    return;
  }
  }
}

void MpiCommunicator::runAllGather(const Collective &c,
                                   Clock::time_point began) {
  int count = mpiCount(c, c.count);
  MPI_Datatype type = mpiType(c.dtype);
  MPI_Request request = MPI_REQUEST_NULL;
  ZSHARD_MPI_CHECK(where(c),
                   MPI_Iallgather(c.inPlace ? MPI_IN_PLACE : c.send, count,
                                  type, c.recv, count, type, comm, &request));
  complete(request, collectiveName(c.kind), comm, began);
}

bool MpiCommunicator::reducesNatively(const Collective &c) const {
  return c.dtype == CommDType::I32 ||
         (c.dtype == CommDType::F32 && floatReduction == MpiReduction::Native);
}

void MpiCommunicator::averageNativeSum(const Collective &c, int count) const {
  if (c.op == ReduceOp::Avg)
    for (int k = 0; k < count; ++k)
      static_cast<float *>(c.recv)[k] /= float(mySize);
}

void MpiCommunicator::runReduceScatter(const Collective &c,
                                       Clock::time_point began) {
  int count = mpiCount(c, c.count);
  MPI_Datatype type = mpiType(c.dtype);
  if (reducesNatively(c)) {
    MPI_Op op = c.op == ReduceOp::Max ? MPI_MAX : MPI_SUM;
    MPI_Request request = MPI_REQUEST_NULL;
    ZSHARD_MPI_CHECK(where(c), MPI_Ireduce_scatter_block(
                                   c.inPlace ? MPI_IN_PLACE : c.send, c.recv,
                                   count, type, op, comm, &request));
    complete(request, collectiveName(c.kind), comm, began);
    averageNativeSum(c, count);
    return;
  }
  // Segment r of every rank's input to rank r, then reduce in rank order.
  const size_t elem = commDTypeSize(c.dtype);
  CommBuffer received(c.memCtx, uint64_t(c.count) * elem * uint64_t(mySize));
  MPI_Request request = MPI_REQUEST_NULL;
  ZSHARD_MPI_CHECK(where(c), MPI_Ialltoall(c.send, count, type, received.data(),
                                           count, type, comm, &request));
  complete(request, collectiveName(c.kind), comm, began);
  std::vector<const void *> srcs;
  for (int j = 0; j < mySize; ++j)
    srcs.push_back(elementAt(received.data(), j * c.count, c.dtype));
  void *dst = c.recv;
  reduceRankOrder(c.dtype, c.op, mySize, srcs.data(), mySize, &dst, 1, c.count);
}

void MpiCommunicator::runAllReduce(const Collective &c,
                                   Clock::time_point began) {
  int count = mpiCount(c, c.count);
  MPI_Datatype type = mpiType(c.dtype);
  if (reducesNatively(c)) {
    MPI_Op op = c.op == ReduceOp::Max ? MPI_MAX : MPI_SUM;
    MPI_Request request = MPI_REQUEST_NULL;
    ZSHARD_MPI_CHECK(where(c),
                     MPI_Iallreduce(c.inPlace ? MPI_IN_PLACE : c.send, c.recv,
                                    count, type, op, comm, &request));
    complete(request, collectiveName(c.kind), comm, began);
    averageNativeSum(c, count);
    return;
  }
  // Chunk r of every rank's input to rank r, reduced there in rank order, then
  // every chunk to every rank.
  const size_t n = size_t(mySize);
  std::vector<int> sendCounts(n), sendDispls(n), recvCounts(n), recvDispls(n);
  const Chunk mine = chunkOf(c.count, mySize, myRank);
  for (int j = 0; j < mySize; ++j) {
    Chunk theirs = chunkOf(c.count, mySize, j);
    sendCounts[size_t(j)] = int(theirs.length);
    sendDispls[size_t(j)] = int(theirs.begin);
    recvCounts[size_t(j)] = int(mine.length);
    recvDispls[size_t(j)] = int(j * mine.length);
  }
  const size_t elem = commDTypeSize(c.dtype);
  CommBuffer received(c.memCtx,
                      uint64_t(mine.length) * elem * uint64_t(mySize));
  MPI_Request request = MPI_REQUEST_NULL;
  ZSHARD_MPI_CHECK(where(c),
                   MPI_Ialltoallv(c.send, sendCounts.data(), sendDispls.data(),
                                  type, received.data(), recvCounts.data(),
                                  recvDispls.data(), type, comm, &request));
  complete(request, collectiveName(c.kind), comm, began);
  std::vector<const void *> srcs;
  for (int j = 0; j < mySize; ++j)
    srcs.push_back(elementAt(received.data(), j * mine.length, c.dtype));
  // The send buffer is free again, so this is safe in place too.
  void *dst = elementAt(c.recv, mine.begin, c.dtype);
  reduceRankOrder(c.dtype, c.op, mySize, srcs.data(), mySize, &dst, 1,
                  mine.length);
  ZSHARD_MPI_CHECK(where(c),
                   MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, c.recv,
                                   sendCounts.data(), sendDispls.data(), type,
                                   comm, &request));
  complete(request, collectiveName(c.kind), comm, began);
}

std::unique_ptr<Communicator> MpiCommunicator::splitGroup(int color, int key) {
  // MPI_Comm_split has no non-blocking form: once every rank has passed the
  // gate, all of them are in the split.
  gate(comm, "split (MPI_Comm_split)");
  MPI_Comm made = MPI_COMM_NULL;
  ZSHARD_MPI_CHECK(
      "mpi split",
      MPI_Comm_split(comm, color < 0 ? MPI_UNDEFINED : color, key, &made));
  if (made == MPI_COMM_NULL)
    return nullptr;
  return std::unique_ptr<Communicator>(
      new MpiCommunicator(Adopt{}, made, floatReduction));
}
