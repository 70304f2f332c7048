//===- MpiCommunicator.cpp - Collectives over an MPI communicator ---------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/mpi/MpiCommunicator.h"

#include "comm/CommBuffer.h"
#include "comm/Reduce.h"
#include "core/Failure.h"

#include <climits>
#include <string>
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

} // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm parent, MpiReduction reduction)
    : floatReduction(reduction) {
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
  ZSHARD_MPI_CHECK("mpi communicator", MPI_Comm_dup(parent, &comm));
  init();
}

MpiCommunicator::MpiCommunicator(Adopt, MPI_Comm owned, MpiReduction reduction)
    : comm(owned), floatReduction(reduction) {
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
  switch (c.kind) {
  case Collective::Kind::AllGather:
    return runAllGather(c);
  case Collective::Kind::ReduceScatter:
    return runReduceScatter(c);
  case Collective::Kind::AllReduce:
    return runAllReduce(c);
  case Collective::Kind::Barrier:
    ZSHARD_MPI_CHECK(where(c), MPI_Barrier(comm));
    return;
  }
}

void MpiCommunicator::runAllGather(const Collective &c) {
  int count = mpiCount(c, c.count);
  MPI_Datatype type = mpiType(c.dtype);
  ZSHARD_MPI_CHECK(where(c),
                   MPI_Allgather(c.inPlace ? MPI_IN_PLACE : c.send, count, type,
                                 c.recv, count, type, comm));
}

void MpiCommunicator::runReduceScatter(const Collective &c) {
  int count = mpiCount(c, c.count);
  MPI_Datatype type = mpiType(c.dtype);
  bool native =
      c.dtype == CommDType::I32 ||
      (c.dtype == CommDType::F32 && floatReduction == MpiReduction::Native);
  if (native) {
    MPI_Op op = c.op == ReduceOp::Max ? MPI_MAX : MPI_SUM;
    ZSHARD_MPI_CHECK(where(c),
                     MPI_Reduce_scatter_block(c.inPlace ? MPI_IN_PLACE : c.send,
                                              c.recv, count, type, op, comm));
    if (c.op == ReduceOp::Avg)
      for (int k = 0; k < count; ++k)
        static_cast<float *>(c.recv)[k] /= float(mySize);
    return;
  }
  // Segment r of every rank's input to rank r, then reduce in rank order.
  const size_t elem = commDTypeSize(c.dtype);
  CommBuffer received(c.memCtx, uint64_t(c.count) * elem * uint64_t(mySize));
  ZSHARD_MPI_CHECK(where(c), MPI_Alltoall(c.send, count, type, received.data(),
                                          count, type, comm));
  std::vector<const void *> srcs;
  for (int j = 0; j < mySize; ++j)
    srcs.push_back(elementAt(received.data(), j * c.count, c.dtype));
  void *dst = c.recv;
  reduceRankOrder(c.dtype, c.op, mySize, srcs.data(), mySize, &dst, 1, c.count);
}

void MpiCommunicator::runAllReduce(const Collective &c) {
  int count = mpiCount(c, c.count);
  MPI_Datatype type = mpiType(c.dtype);
  bool native =
      c.dtype == CommDType::I32 ||
      (c.dtype == CommDType::F32 && floatReduction == MpiReduction::Native);
  if (native) {
    MPI_Op op = c.op == ReduceOp::Max ? MPI_MAX : MPI_SUM;
    ZSHARD_MPI_CHECK(where(c), MPI_Allreduce(c.inPlace ? MPI_IN_PLACE : c.send,
                                             c.recv, count, type, op, comm));
    if (c.op == ReduceOp::Avg)
      for (int k = 0; k < count; ++k)
        static_cast<float *>(c.recv)[k] /= float(mySize);
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
  ZSHARD_MPI_CHECK(where(c),
                   MPI_Alltoallv(c.send, sendCounts.data(), sendDispls.data(),
                                 type, received.data(), recvCounts.data(),
                                 recvDispls.data(), type, comm));
  std::vector<const void *> srcs;
  for (int j = 0; j < mySize; ++j)
    srcs.push_back(elementAt(received.data(), j * mine.length, c.dtype));
  // The send buffer is free again, so this is safe in place too.
  void *dst = elementAt(c.recv, mine.begin, c.dtype);
  reduceRankOrder(c.dtype, c.op, mySize, srcs.data(), mySize, &dst, 1,
                  mine.length);
  ZSHARD_MPI_CHECK(where(c), MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
                                            c.recv, sendCounts.data(),
                                            sendDispls.data(), type, comm));
}

std::unique_ptr<Communicator> MpiCommunicator::splitGroup(int color, int key) {
  MPI_Comm made = MPI_COMM_NULL;
  ZSHARD_MPI_CHECK(
      "mpi split",
      MPI_Comm_split(comm, color < 0 ? MPI_UNDEFINED : color, key, &made));
  if (made == MPI_COMM_NULL)
    return nullptr;
  return std::unique_ptr<Communicator>(
      new MpiCommunicator(Adopt{}, made, floatReduction));
}
