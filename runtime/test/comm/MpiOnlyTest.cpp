//===- MpiOnlyTest.cpp - What only the MPI backend has --------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// MpiReduction::Native hands f32 reductions to MPI_Allreduce and
// MPI_Reduce_scatter_block: the results are right up to rounding, but the
// order of the additions is MPI's, so only closeness is checked.
//
//===----------------------------------------------------------------------===//

#include "CommReference.h"

#include "comm/mpi/MpiCommunicator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace zshard::rt;
using namespace zshard::rt::test;

TEST(MpiNativeReduction, F32IsCloseToTheRankOrderReduction) {
  MpiCommunicator comm(MPI_COMM_WORLD, MpiReduction::Native);
  const int n = comm.size(), r = comm.rank();
  const int64_t count = 1001;
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max}) {
    Bytes send = input(CommDType::F32, r, n * count, 11);
    std::vector<float> all(send.size() / 4), mine(send.size() / 4 / size_t(n));
    comm.allReduce(send.data(), all.data(), n * count, CommDType::F32, op);
    comm.reduceScatter(send.data(), mine.data(), count, CommDType::F32, op);
    Bytes want = referenceReduce(CommDType::F32, op, n, 0, n * count, 11);
    for (int64_t k = 0; k < n * count; ++k) {
      float expected;
      std::memcpy(&expected, &want[size_t(k) * 4], 4);
      EXPECT_NEAR(all[size_t(k)], expected, 1e-5f * 128 * float(n))
          << reduceOpName(op) << " element " << k;
      if (k >= r * count && k < (r + 1) * count) {
        EXPECT_NEAR(mine[size_t(k - r * count)], expected,
                    1e-5f * 128 * float(n));
      }
    }
  }
  // i32 always goes to MPI, and is exact.
  int32_t one = 1, total = 0;
  comm.allReduce(&one, &total, 1, CommDType::I32, ReduceOp::Sum);
  EXPECT_EQ(total, n);
}
