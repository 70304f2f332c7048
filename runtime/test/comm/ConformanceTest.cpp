//===- ConformanceTest.cpp - One suite of collectives for every backend ---===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The cases every backend must pass, parameterised by backend (see
// CommHarness.h): the local test program instantiates them with 1, 2, 3 and 4
// thread ranks, the MPI one with the ranks of its mpiexec job. Results are
// compared bit for bit with a scalar reference that reduces in rank order.
//
//===----------------------------------------------------------------------===//

#include "CommHarness.h"
#include "CommReference.h"

#include "comm/Grid.h"
#include "core/Failure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

const CommDType allDTypes[] = {CommDType::F32, CommDType::BF16, CommDType::F16,
                               CommDType::I32};
const ReduceOp allOps[] = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max};
const int64_t oddCounts[] = {1, 7, 1001};

std::string describe(const char *what, CommDType dtype, int64_t count) {
  return std::string(what) + " " + commDTypeName(dtype) + " count " +
         std::to_string(count);
}

std::string describe(const char *what, CommDType dtype, ReduceOp op,
                     int64_t count) {
  return describe(what, dtype, count) + " " + reduceOpName(op);
}

/// Fails with the first differing element of \p got and \p want.
void expectBytes(const Bytes &got, const Bytes &want, CommDType dtype,
                 const std::string &what, int rank) {
  ASSERT_EQ(got.size(), want.size()) << what << " on rank " << rank;
  const size_t elem = commDTypeSize(dtype);
  for (size_t k = 0; k < got.size(); k += elem)
    if (std::memcmp(&got[k], &want[k], elem) != 0) {
      uint32_t g = 0, w = 0;
      std::memcpy(&g, &got[k], elem);
      std::memcpy(&w, &want[k], elem);
      FAIL() << what << " on rank " << rank << ": element " << k / elem
             << " has bits 0x" << std::hex << g << ", expected 0x" << w;
    }
}

Bytes concat(CommDType dtype, int size, int64_t count, uint64_t salt) {
  Bytes all;
  for (int j = 0; j < size; ++j) {
    Bytes part = input(dtype, j, count, salt);
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

uint64_t combine(uint64_t hash, uint64_t value) {
  return splitMix(hash ^ value);
}

void expectAllEqual(const std::vector<uint64_t> &values, const char *what) {
  for (size_t r = 1; r < values.size(); ++r)
    EXPECT_EQ(values[r], values[0]) << what << ": rank " << r << " differs";
}

/// Some work for the caller while collectives are in flight.
float compute(int iterations) {
  float acc = 0;
  for (int i = 0; i < iterations; ++i)
    acc = std::fma(acc, 0.999f, std::sin(float(i)));
  return acc;
}

class CommConformance : public testing::TestWithParam<BackendSpec> {
protected:
  void SetUp() override { harness = makeHarness(GetParam()); }
  void TearDown() override { harness.reset(); }

  int size() const { return harness->size(); }

  std::unique_ptr<Harness> harness;
};

} // namespace

INSTANTIATE_TEST_SUITE_P(Backends, CommConformance,
                         testing::ValuesIn(conformanceBackends()),
                         backendSpecName);

TEST_P(CommConformance, RankAndSize) {
  std::vector<uint64_t> ranks = harness->run([&](Communicator &comm) {
    EXPECT_EQ(comm.size(), size());
    EXPECT_STREQ(comm.backend(), harness->backend());
    comm.barrier();
    return uint64_t(comm.rank());
  });
  for (size_t r = 0; r < ranks.size(); ++r)
    EXPECT_EQ(ranks[r], r);
}

TEST_P(CommConformance, AllGatherEveryDType) {
  const int n = size();
  std::vector<uint64_t> digests = harness->run([&](Communicator &comm) {
    uint64_t hash = 0;
    for (CommDType dtype : allDTypes)
      for (int64_t count :
           {int64_t(0), int64_t(1), int64_t(7), int64_t(1001)}) {
        uint64_t salt = uint64_t(dtype) * 7919 + uint64_t(count);
        Bytes send = input(dtype, comm.rank(), count, salt);
        Bytes recv(size_t(n) * send.size(), 0xab);
        comm.allGather(send.data(), recv.data(), count, dtype);
        expectBytes(recv, concat(dtype, n, count, salt), dtype,
                    describe("allGather", dtype, count), comm.rank());
        hash = combine(hash, digest(recv));
      }
    return hash;
  });
  expectAllEqual(digests, "allGather");
}

TEST_P(CommConformance, ReduceScatterEveryDTypeAndOp) {
  const int n = size();
  harness->run([&](Communicator &comm) {
    for (CommDType dtype : allDTypes)
      for (ReduceOp op : allOps)
        for (int64_t count : oddCounts) {
          if (!supportsReduction(dtype, op))
            continue;
          uint64_t salt =
              uint64_t(dtype) * 131 + uint64_t(op) * 17 + uint64_t(count);
          Bytes send = input(dtype, comm.rank(), n * count, salt);
          Bytes recv(size_t(count) * commDTypeSize(dtype), 0xab);
          comm.reduceScatter(send.data(), recv.data(), count, dtype, op);
          expectBytes(
              recv,
              referenceReduce(dtype, op, n, comm.rank() * count, count, salt),
              dtype, describe("reduceScatter", dtype, op, count), comm.rank());
        }
    return uint64_t(0);
  });
}

TEST_P(CommConformance, AllReduceEveryDTypeAndOp) {
  const int n = size();
  std::vector<uint64_t> digests = harness->run([&](Communicator &comm) {
    uint64_t hash = 0;
    for (CommDType dtype : allDTypes)
      for (ReduceOp op : allOps)
        for (int64_t count : oddCounts) {
          if (!supportsReduction(dtype, op))
            continue;
          uint64_t salt =
              uint64_t(dtype) * 257 + uint64_t(op) * 31 + uint64_t(count);
          Bytes send = input(dtype, comm.rank(), count, salt);
          Bytes recv(send.size(), 0xab);
          comm.allReduce(send.data(), recv.data(), count, dtype, op);
          expectBytes(recv, referenceReduce(dtype, op, n, 0, count, salt),
                      dtype, describe("allReduce", dtype, op, count),
                      comm.rank());
          hash = combine(hash, digest(recv));
        }
    return hash;
  });
  expectAllEqual(digests, "allReduce");
}

TEST_P(CommConformance, InPlace) {
  const int n = size();
  harness->run([&](Communicator &comm) {
    const int r = comm.rank();
    for (CommDType dtype : {CommDType::F32, CommDType::BF16, CommDType::I32})
      for (int64_t count : {int64_t(7), int64_t(1001)}) {
        const size_t elem = commDTypeSize(dtype);
        const uint64_t salt = uint64_t(dtype) * 3 + uint64_t(count);
        const ReduceOp op =
            dtype == CommDType::I32 ? ReduceOp::Sum : ReduceOp::Avg;

        Bytes gathered(size_t(n * count) * elem, 0xab);
        Bytes mine = input(dtype, r, count, salt);
        std::copy(mine.begin(), mine.end(),
                  gathered.begin() + ptrdiff_t(size_t(r * count) * elem));
        comm.allGather(gathered.data() + size_t(r * count) * elem,
                       gathered.data(), count, dtype);
        expectBytes(gathered, concat(dtype, n, count, salt), dtype,
                    describe("in-place allGather", dtype, count), r);

        Bytes scattered = input(dtype, r, n * count, salt);
        comm.reduceScatter(scattered.data(), scattered.data(), count, dtype,
                           op);
        scattered.resize(size_t(count) * elem);
        expectBytes(
            scattered, referenceReduce(dtype, op, n, r * count, count, salt),
            dtype, describe("in-place reduceScatter", dtype, op, count), r);

        Bytes reduced = input(dtype, r, count, salt);
        comm.allReduce(reduced.data(), reduced.data(), count, dtype, op);
        expectBytes(reduced, referenceReduce(dtype, op, n, 0, count, salt),
                    dtype, describe("in-place allReduce", dtype, op, count), r);
      }
    return uint64_t(0);
  });
}

// Rank 0 holds 1, every other rank 2^-8. The f32 sum 1 + (N-1) 2^-8 is
// rounded once to bf16 (8 significant bits): N=2 is a tie that goes to the
// even 1.0, N=3 is exactly 1 + 2^-7, N=4 a tie that goes to the even
// 1 + 2^-6. Adding in bf16 step by step would give 1.0 every time.
TEST_P(CommConformance, Bf16ReducesInF32AndRoundsToNearestEven) {
  const int n = size();
  const uint16_t expectedSum[] = {0x3f80, 0x3f80, 0x3f80, 0x3f81, 0x3f82};
  harness->run([&](Communicator &comm) {
    const uint16_t mine = comm.rank() == 0 ? 0x3f80 : 0x3b80; // 1, 2^-8
    float sum = 1.0f + float(n - 1) * 0.00390625f;
    const uint16_t sumBits = referenceBf16(sum);
    if (n <= 4) {
      EXPECT_EQ(sumBits, expectedSum[n]);
    }

    uint16_t reduced = 0;
    comm.allReduce(&mine, &reduced, 1, CommDType::BF16, ReduceOp::Sum);
    EXPECT_EQ(reduced, sumBits) << "allReduce sum";

    comm.allReduce(&mine, &reduced, 1, CommDType::BF16, ReduceOp::Avg);
    EXPECT_EQ(reduced, referenceBf16(sum / float(n))) << "allReduce avg";

    std::vector<uint16_t> segments(size_t(n), mine);
    comm.reduceScatter(segments.data(), &reduced, 1, CommDType::BF16,
                       ReduceOp::Sum);
    EXPECT_EQ(reduced, sumBits) << "reduceScatter sum";
    return uint64_t(0);
  });
}

// With 1, 1e8, -1e8, 1 the order of the f32 additions decides the result
// (ulp(1e8) = 8): ((1 + 1e8) - 1e8) + 1 = 1 but (1 + 1e8) + (-1e8 + 1) = 0,
// and for three ranks (1 + 1e8) - 1e8 = 0 but 1 + (1e8 - 1e8) = 1.
TEST_P(CommConformance, SumsInRankOrder) {
  const int n = size();
  const float table[] = {1.0f, 1e8f, -1e8f, 1.0f};
  harness->run([&](Communicator &comm) {
    const int64_t count = 4;
    std::vector<float> send(size_t(n * count));
    for (int64_t k = 0; k < n * count; ++k)
      send[size_t(k)] = table[size_t((comm.rank() + k) % 4)];
    auto rankOrder = [&](int64_t k) {
      float acc = table[size_t(k % 4)];
      for (int j = 1; j < n; ++j)
        acc += table[size_t((j + k) % 4)];
      return acc;
    };
    if (n == 3) { // the case is discriminating: other orders differ
      EXPECT_NE(rankOrder(0), table[0] + (table[1] + table[2]));
    }
    std::vector<float> all(4), mine(4);
    comm.allReduce(send.data(), all.data(), count, CommDType::F32,
                   ReduceOp::Sum);
    comm.reduceScatter(send.data(), mine.data(), count, CommDType::F32,
                       ReduceOp::Sum);
    for (int64_t k = 0; k < count; ++k) {
      EXPECT_EQ(bitsOf(all[size_t(k)]), bitsOf(rankOrder(k)))
          << "element " << k;
      EXPECT_EQ(bitsOf(mine[size_t(k)]),
                bitsOf(rankOrder(comm.rank() * count + k)))
          << "reduceScatter element " << k;
    }
    return uint64_t(0);
  });
}

// Ties keep the lower rank's value (-0 before +0), NaN wins wherever it is.
TEST_P(CommConformance, MaxTiesAndNaN) {
  const int n = size();
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  harness->run([&](Communicator &comm) {
    const int r = comm.rank();
    float send[4] = {r == 0 ? -0.0f : 0.0f, r == n - 1 ? nan : 1.0f,
                     r == 0 ? nan : 2.0f, r == n - 1 ? inf : -inf};
    float recv[4];
    comm.allReduce(send, recv, 4, CommDType::F32, ReduceOp::Max);
    EXPECT_EQ(bitsOf(recv[0]), bitsOf(-0.0f));
    EXPECT_TRUE(std::isnan(recv[1]));
    EXPECT_TRUE(std::isnan(recv[2]));
    EXPECT_EQ(recv[3], inf);
    return uint64_t(0);
  });
}

TEST_P(CommConformance, AsyncStartWaitWithComputeInBetween) {
  const int n = size();
  harness->run([&](Communicator &comm) {
    const int r = comm.rank();
    const int64_t count = 1001;
    Bytes gatherSend = input(CommDType::BF16, r, count, 1);
    Bytes gathered(size_t(n) * gatherSend.size());
    Bytes scatterSend = input(CommDType::F32, r, n * count, 2);
    Bytes scattered(size_t(count) * 4);
    Bytes reduced = input(CommDType::F16, r, count, 3);

    Request a = comm.startAllGather(gatherSend.data(), gathered.data(), count,
                                    CommDType::BF16);
    Request b = comm.startReduceScatter(scatterSend.data(), scattered.data(),
                                        count, CommDType::F32, ReduceOp::Sum);
    Request c = comm.startAllReduce(reduced.data(), reduced.data(), count,
                                    CommDType::F16, ReduceOp::Avg);
    volatile float sink = compute(20000);
    (void)sink;
    c.wait(); // any order
    a.wait();
    b.wait();
    EXPECT_TRUE(a.done() && b.done() && c.done());
    a.wait(); // spent: returns at once

    // A blocking collective runs after the started ones.
    Bytes later(size_t(n) * 4);
    int32_t one = 1, total = 0;
    Request d = comm.startAllGather(&one, later.data(), 1, CommDType::I32);
    comm.allReduce(&one, &total, 1, CommDType::I32, ReduceOp::Sum);
    EXPECT_TRUE(d.done());
    EXPECT_EQ(total, n);
    d.wait();

    expectBytes(gathered, concat(CommDType::BF16, n, count, 1), CommDType::BF16,
                "started allGather", r);
    expectBytes(
        scattered,
        referenceReduce(CommDType::F32, ReduceOp::Sum, n, r * count, count, 2),
        CommDType::F32, "started reduceScatter", r);
    expectBytes(reduced,
                referenceReduce(CommDType::F16, ReduceOp::Avg, n, 0, count, 3),
                CommDType::F16, "started allReduce", r);
    return uint64_t(0);
  });
}

TEST_P(CommConformance, SplitByColorAndKey) {
  const int n = size();
  // Even and odd ranks, each group in reverse order; the last rank of an
  // odd-sized world (of more than one) stays out.
  auto colorOf = [&](int r) {
    return n % 2 == 1 && n > 1 && r == n - 1 ? -1 : r % 2;
  };
  harness->run([&](Communicator &comm) {
    const int r = comm.rank();
    const int color = colorOf(r);
    std::unique_ptr<Communicator> group = comm.split(color, -r);
    int32_t mine = r;
    if (color < 0) {
      EXPECT_EQ(group, nullptr);
    } else if (!group) {
      ADD_FAILURE() << "rank " << r << " got no group";
    } else {
      std::vector<int32_t> members;
      for (int j = n - 1; j >= 0; --j)
        if (colorOf(j) == color)
          members.push_back(j);
      EXPECT_EQ(group->size(), int(members.size()));
      EXPECT_EQ(members[size_t(group->rank())], r);
      std::vector<int32_t> gathered(members.size());
      group->allGather(&mine, gathered.data(), 1, CommDType::I32);
      EXPECT_EQ(gathered, members);
    }
    // The parent still works beside its children.
    int32_t total = 0;
    comm.barrier();
    comm.allReduce(&mine, &total, 1, CommDType::I32, ReduceOp::Sum);
    EXPECT_EQ(total, n * (n - 1) / 2);
    return uint64_t(0);
  });
}

TEST_P(CommConformance, GridGroups) {
  const int n = size();
  std::vector<std::vector<int64_t>> shapes = {{n}, {1, n}, {n, 1}};
  if (n == 4) {
    shapes.push_back({2, 2});
    shapes.push_back({2, 1, 2});
  }
  harness->run([&](Communicator &comm) {
    const int r = comm.rank();
    for (const std::vector<int64_t> &shape : shapes) {
      Grid grid(comm, shape);
      EXPECT_EQ(grid.coords(), Grid::coordsOf(r, shape));
      for (uint64_t mask = 0; mask < (uint64_t(1) << shape.size()); ++mask) {
        // Members: the ranks equal to this one off the masked axes.
        std::vector<int32_t> members;
        for (int j = 0; j < n; ++j) {
          std::vector<int64_t> theirs = Grid::coordsOf(j, shape);
          bool same = true;
          for (size_t i = 0; i < shape.size(); ++i)
            same = same && ((mask >> i & 1) || theirs[i] == grid.coords()[i]);
          if (same)
            members.push_back(j);
        }
        Communicator &group = grid.group(mask);
        SCOPED_TRACE("shape of " + std::to_string(shape.size()) +
                     " axes, mask " + std::to_string(mask));
        EXPECT_EQ(group.size(), int(members.size()));
        EXPECT_EQ(members[size_t(group.rank())], r);
        std::vector<int32_t> gathered(members.size());
        int32_t mine = r, total = 0;
        group.allGather(&mine, gathered.data(), 1, CommDType::I32);
        EXPECT_EQ(gathered, members);
        group.allReduce(&mine, &total, 1, CommDType::I32, ReduceOp::Sum);
        EXPECT_EQ(total, std::accumulate(members.begin(), members.end(), 0));
      }
      if (shape == std::vector<int64_t>{2, 2}) {
        // Axis 1 varies within a row, axis 0 within a column.
        std::vector<int32_t> row(2), column(2);
        int32_t mine = r;
        grid.group(0b10).allGather(&mine, row.data(), 1, CommDType::I32);
        grid.group(0b01).allGather(&mine, column.data(), 1, CommDType::I32);
        EXPECT_EQ(row, (std::vector<int32_t>{r / 2 * 2, r / 2 * 2 + 1}));
        EXPECT_EQ(column, (std::vector<int32_t>{r % 2, r % 2 + 2}));
      }
    }
    EXPECT_THROW(Grid(comm, {int64_t(n) + 1}), Failure);
    EXPECT_THROW(Grid(comm, {}), Failure);
    return uint64_t(0);
  });
}

// Bitwise equal across ranks, across runs and across backends: the same
// collectives on a local world of the same size give the same bits.
TEST_P(CommConformance, DeterministicAcrossRanksRunsAndBackends) {
  const int n = size();
  const int64_t count = 1001;
  auto body = [&](Communicator &comm) {
    const int r = comm.rank();
    uint64_t hash = 0;
    for (CommDType dtype : {CommDType::F32, CommDType::BF16, CommDType::F16}) {
      const size_t elem = commDTypeSize(dtype);
      Bytes send = input(dtype, r, n * count, 99);
      Bytes reduced(send.size()), scattered(size_t(count) * elem);
      comm.allReduce(send.data(), reduced.data(), n * count, dtype,
                     ReduceOp::Avg);
      comm.reduceScatter(send.data(), scattered.data(), count, dtype,
                         ReduceOp::Sum);
      // reduceScatter's part must be the allReduce's (same order, same bits)
      // before dividing: compare against a fresh sum allReduce.
      Bytes summed(send.size());
      comm.allReduce(send.data(), summed.data(), n * count, dtype,
                     ReduceOp::Sum);
      EXPECT_TRUE(
          std::equal(scattered.begin(), scattered.end(),
                     summed.begin() + ptrdiff_t(size_t(r * count) * elem)))
          << commDTypeName(dtype) << ": reduceScatter differs from allReduce";
      hash = combine(hash, digest(reduced));
    }
    return hash;
  };
  std::vector<uint64_t> first = harness->run(body);
  expectAllEqual(first, "allReduce digest");
  EXPECT_EQ(harness->run(body), first) << "a second run differs";
  EXPECT_EQ(makeLocalHarness(n)->run(body), first)
      << "the local backend gives other bits";
}

TEST_P(CommConformance, MisuseThrowsBeforeCommunicating) {
  harness->run([&](Communicator &comm) {
    std::vector<float> buffer(64, 1.0f);
    float *data = buffer.data();
    EXPECT_THROW(
        comm.allReduce(data, data + 32, -1, CommDType::F32, ReduceOp::Sum),
        Failure);
    EXPECT_THROW(
        comm.allReduce(data, data + 32, 4, CommDType::I32, ReduceOp::Avg),
        Failure);
    EXPECT_THROW(
        comm.allReduce(data, data + 1, 4, CommDType::F32, ReduceOp::Sum),
        Failure);
    EXPECT_THROW(
        comm.allReduce(data, nullptr, 4, CommDType::F32, ReduceOp::Sum),
        Failure);
    EXPECT_THROW(comm.allGather(data, data + 1, 1, CommDType(7)), Failure);
    EXPECT_THROW(comm.startReduceScatter(data, data + 16, 1, CommDType::F32,
                                         ReduceOp(9)),
                 Failure);
    try {
      comm.allReduce(data, data + 32, 4, CommDType::I32, ReduceOp::Avg);
    } catch (const Failure &failure) {
      EXPECT_EQ(std::string(failure.what()),
                std::string(comm.backend()) +
                    " allReduce: avg is not defined for i32");
    }
    // Nothing was sent: the next collective pairs up as usual.
    float total = 0;
    comm.allReduce(data, &total, 1, CommDType::F32, ReduceOp::Sum);
    EXPECT_EQ(total, float(size()));
    return uint64_t(0);
  });
}

// What compiled steps call, from each rank's thread: the current grid, its
// coordinates, the step collectives over axis masks, started collectives and
// the communication memory category.
TEST_P(CommConformance, StepAbiFromRankThreads) {
  const int n = size();
  const std::vector<int64_t> shape =
      n == 4 ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{1, n};
  harness->runC([&](zshard_rt_comm *comm) {
    int32_t r = -1, commSize = -1;
    EXPECT_EQ(zshard_rt_comm_rank(comm, &r), ZSHARD_RT_OK);
    EXPECT_EQ(zshard_rt_comm_size(comm, &commSize), ZSHARD_RT_OK);
    EXPECT_EQ(commSize, n);

    zshard_rt_grid *grid = nullptr;
    const int64_t badShape[] = {n, 2};
    EXPECT_EQ(zshard_rt_grid_create(comm, 2, badShape, &grid),
              ZSHARD_RT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(grid, nullptr);
    EXPECT_EQ(zshard_rt_grid_create(comm, 2, shape.data(), &grid), ZSHARD_RT_OK)
        << zshard_rt_last_error_message();
    if (!grid)
      return uint64_t(0);
    zshard_rt_set_current_grid(grid);
    EXPECT_EQ(zshard_rt_current_grid(), grid);
    const std::vector<int64_t> coords = Grid::coordsOf(r, shape);
    for (int32_t axis = 0; axis < 2; ++axis) {
      EXPECT_EQ(zshard_rt_step_grid_coord(axis), coords[size_t(axis)]);
      EXPECT_EQ(zshard_rt_step_grid_size(axis), shape[size_t(axis)]);
    }
    zshard_rt_mem_ctx *ctx = nullptr;
    EXPECT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
    zshard_rt_set_current_mem_ctx(ctx);

    const int64_t count = 7;
    // Every axis: the whole world, in rank order.
    Bytes send = input(CommDType::F32, r, count, 5);
    Bytes gathered(size_t(n) * send.size());
    zshard_rt_step_all_gather(0b11, send.data(), gathered.data(), count,
                              ZSHARD_RT_COMM_F32);
    expectBytes(gathered, concat(CommDType::F32, n, count, 5), CommDType::F32,
                "step all_gather", r);

    // In place over every axis: charged to the communication category.
    Bytes scattered = input(CommDType::BF16, r, n * count, 6);
    zshard_rt_step_reduce_scatter(0b11, scattered.data(), scattered.data(),
                                  count, ZSHARD_RT_COMM_BF16,
                                  ZSHARD_RT_REDUCE_SUM);
    scattered.resize(size_t(count) * 2);
    expectBytes(
        scattered,
        referenceReduce(CommDType::BF16, ReduceOp::Sum, n, r * count, count, 6),
        CommDType::BF16, "step reduce_scatter", r);
    uint64_t peak = 0, live = 1;
    EXPECT_EQ(zshard_rt_mem_peak_bytes(ctx, ZSHARD_RT_MEM_COMMUNICATION, &peak),
              ZSHARD_RT_OK);
    EXPECT_EQ(zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_COMMUNICATION, &live),
              ZSHARD_RT_OK);
    if (n > 1) {
      EXPECT_GE(peak, uint64_t(count) * 2);
    }
    EXPECT_EQ(live, 0u);

    // Axis 1 only: the group of this rank's row, keyed by coordinate 1.
    const int64_t rowSize = shape[1];
    const int rowRank = int(coords[1]);
    Bytes rowSend = input(CommDType::F32, rowRank, count, 7);
    Bytes rowReduced(rowSend.size());
    zshard_rt_step_all_reduce(0b10, rowSend.data(), rowReduced.data(), count,
                              ZSHARD_RT_COMM_F32, ZSHARD_RT_REDUCE_AVG);
    expectBytes(rowReduced,
                referenceReduce(CommDType::F32, ReduceOp::Avg, int(rowSize), 0,
                                count, 7),
                CommDType::F32, "step all_reduce over axis 1", r);

    // Started: over axis 0 and over everything, waited in reverse order.
    const int64_t columnSize = shape[0];
    const int columnRank = int(coords[0]);
    Bytes columnSend = input(CommDType::I32, columnRank, count, 8);
    Bytes columnGathered(size_t(columnSize) * columnSend.size());
    Bytes maxSend = input(CommDType::I32, r, count, 9), maxRecv(maxSend.size());
    int64_t first = zshard_rt_step_all_gather_start(0b01, columnSend.data(),
                                                    columnGathered.data(),
                                                    count, ZSHARD_RT_COMM_I32);
    int64_t second = zshard_rt_step_all_reduce_start(
        0b11, maxSend.data(), maxRecv.data(), count, ZSHARD_RT_COMM_I32,
        ZSHARD_RT_REDUCE_MAX);
    Bytes rsSend = input(CommDType::F32, r, n * count, 10),
          rsRecv(size_t(count) * 4);
    int64_t third = zshard_rt_step_reduce_scatter_start(
        0b11, rsSend.data(), rsRecv.data(), count, ZSHARD_RT_COMM_F32,
        ZSHARD_RT_REDUCE_MAX);
    EXPECT_GT(first, 0);
    EXPECT_NE(first, second);
    EXPECT_EQ(zshard_rt_step_pending_collectives(), 3);
    volatile float sink = compute(5000);
    (void)sink;
    zshard_rt_step_wait(third);
    zshard_rt_step_wait(second);
    zshard_rt_step_wait(first);
    EXPECT_EQ(zshard_rt_step_pending_collectives(), 0);
    expectBytes(columnGathered,
                concat(CommDType::I32, int(columnSize), count, 8),
                CommDType::I32, "started step all_gather", r);
    expectBytes(maxRecv,
                referenceReduce(CommDType::I32, ReduceOp::Max, n, 0, count, 9),
                CommDType::I32, "started step all_reduce", r);
    expectBytes(
        rsRecv,
        referenceReduce(CommDType::F32, ReduceOp::Max, n, r * count, count, 10),
        CommDType::F32, "started step reduce_scatter", r);

    zshard_rt_set_current_mem_ctx(nullptr);
    zshard_rt_mem_ctx_destroy(ctx);
    zshard_rt_set_current_grid(nullptr);
    zshard_rt_grid_destroy(grid);
    EXPECT_EQ(zshard_rt_current_grid(), nullptr);
    return uint64_t(0);
  });
}
