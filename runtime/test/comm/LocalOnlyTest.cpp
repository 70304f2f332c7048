//===- LocalOnlyTest.cpp - What only the local backend has ----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The emulated link and the overlap it makes visible, the agreement check
// between thread ranks, where scratch memory is charged, the C ABI's argument
// checks, and the fatal errors of the step collectives (death tests).
//
//===----------------------------------------------------------------------===//

#include "CommHarness.h"

#include "comm/local/LocalWorld.h"
#include "core/Failure.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Runs body(comm) on each rank's thread of \p world.
template <typename Body> void onRanks(LocalWorld &world, const Body &body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world.size(); ++r)
    threads.emplace_back([&, r] { body(world.communicator(r)); });
  for (std::thread &thread : threads)
    thread.join();
}

uint64_t liveBytes(zshard_rt_mem_ctx *ctx) {
  uint64_t bytes = ~uint64_t(0);
  EXPECT_EQ(zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_COMMUNICATION, &bytes),
            ZSHARD_RT_OK);
  return bytes;
}

uint64_t peakBytes(zshard_rt_mem_ctx *ctx) {
  uint64_t bytes = ~uint64_t(0);
  EXPECT_EQ(zshard_rt_mem_peak_bytes(ctx, ZSHARD_RT_MEM_COMMUNICATION, &bytes),
            ZSHARD_RT_OK);
  return bytes;
}

} // namespace

TEST(LocalWorldTest, RejectsBadSettings) {
  EXPECT_THROW(LocalWorld(0), Failure);
  EXPECT_THROW(LocalWorld(2, EmulatedLink{-1, 0}), Failure);
  EXPECT_THROW(LocalWorld(2, EmulatedLink{10, NAN}), Failure);
  LocalWorld world(2);
  EXPECT_THROW(world.communicator(2), Failure);
  EXPECT_EQ(world.communicator(1).rank(), 1);
}

TEST(EmulatedLinkTest, RingByteCounts) {
  Collective c;
  c.count = 1000; // per rank
  c.dtype = CommDType::F32;
  c.kind = Collective::Kind::AllGather;
  EXPECT_DOUBLE_EQ(EmulatedLink::wireBytes(c, 4), 3.0 / 4 * 4 * 4000);
  c.kind = Collective::Kind::ReduceScatter;
  EXPECT_DOUBLE_EQ(EmulatedLink::wireBytes(c, 4), 3.0 / 4 * 4 * 4000);
  c.kind = Collective::Kind::AllReduce; // count is the whole buffer
  EXPECT_DOUBLE_EQ(EmulatedLink::wireBytes(c, 4), 2 * 3.0 / 4 * 4000);
  c.kind = Collective::Kind::Barrier;
  EXPECT_DOUBLE_EQ(EmulatedLink::wireBytes(c, 4), 0);

  EmulatedLink link{10, 5};
  c.kind = Collective::Kind::AllGather;
  EXPECT_DOUBLE_EQ(link.seconds(c, 4), 5e-6 + 12000 * 8 / 10e9);
  EXPECT_DOUBLE_EQ(link.seconds(c, 1), 0); // nothing on the wire
  EXPECT_DOUBLE_EQ(EmulatedLink{}.seconds(c, 4), 0);
}

TEST(EmulatedLinkTest, CollectivesTakeAtLeastTheModelledTime) {
  // 1 Gbit/s and 1 ms: an all-gather of 64 Ki floats per rank over 2 ranks
  // puts 256 KiB on the wire, 2.1 ms, so at least 3.1 ms.
  LocalWorld world(2, EmulatedLink{1, 1000});
  const int64_t count = 65536;
  onRanks(world, [&](Communicator &comm) {
    std::vector<float> send(size_t(count), float(comm.rank()));
    std::vector<float> recv(size_t(2 * count));
    Collective c;
    c.kind = Collective::Kind::AllGather;
    c.count = count;
    const double modelled = world.link().seconds(c, 2);
    EXPECT_NEAR(modelled, 1e-3 + 262144.0 * 8 / 1e9, 1e-12);
    auto start = Clock::now();
    comm.allGather(send.data(), recv.data(), count, CommDType::F32);
    EXPECT_GE(secondsSince(start), modelled);
    EXPECT_EQ(recv[size_t(count)], 1.0f);
    start = Clock::now();
    comm.barrier();
    EXPECT_GE(secondsSince(start), 1e-3);
  });
}

// The proof of overlap: with a 150 ms link, a started all-reduce returns at
// once and has completed by the end of 300 ms of compute, before wait() is
// called; the whole takes about the compute time, not the sum of both.
TEST(EmulatedLinkTest, StartedCollectivesProgressWhileTheCallerComputes) {
  const double link = 0.15, work = 0.30;
  LocalWorld world(2, EmulatedLink{0, link * 1e6});
  onRanks(world, [&](Communicator &comm) {
    std::vector<float> buffer(1024, 1.0f);
    comm.barrier(); // start together
    auto start = Clock::now();
    Request request = comm.startAllReduce(buffer.data(), buffer.data(), 1024,
                                          CommDType::F32, ReduceOp::Sum);
    const double started = secondsSince(start);
    EXPECT_LT(started, link / 2) << "start blocked for the transfer";
    float acc = 0;
    while (secondsSince(start) < work)
      for (int i = 0; i < 1000; ++i)
        acc = std::fma(acc, 0.999f, std::sin(float(i)));
    volatile float sink = acc;
    (void)sink;
    EXPECT_TRUE(request.done()) << "the transfer did not progress during "
                                   "compute";
    request.wait();
    const double total = secondsSince(start);
    EXPECT_LT(total, work + link - 0.03) << "no overlap: " << total << " s";
    EXPECT_EQ(buffer[0], 2.0f);
  });
}

TEST(LocalGroupTest, RanksCallingDifferentCollectivesAllFail) {
  LocalWorld world(2);
  std::vector<std::string> messages(2);
  onRanks(world, [&](Communicator &comm) {
    float send[4] = {1, 2, 3, 4}, recv[8];
    try {
      if (comm.rank() == 0)
        comm.allReduce(send, recv, 4, CommDType::F32, ReduceOp::Sum);
      else
        comm.allGather(send, recv, 4, CommDType::F32);
    } catch (const Failure &failure) {
      messages[size_t(comm.rank())] = failure.what();
    }
    // The group is still usable.
    comm.allReduce(send, recv, 4, CommDType::F32, ReduceOp::Sum);
    EXPECT_EQ(recv[3], 8.0f);
  });
  const std::string disagreement =
      "ranks disagree: rank 0 calls allReduce of 4 f32 sum, rank 1 calls "
      "allGather of 4 f32";
  EXPECT_EQ(messages[0], "local allReduce: " + disagreement);
  EXPECT_EQ(messages[1], "local allGather: " + disagreement);
}

// A started in-place reduce-scatter stages its result in a buffer charged to
// the context current on the thread that started it, though it runs on the
// progress thread; it is freed when the collective ends.
TEST(LocalGroupTest, ScratchIsChargedToTheStartingThreadsContext) {
  LocalWorld world(2);
  onRanks(world, [&](Communicator &comm) {
    zshard_rt_mem_ctx *ctx = nullptr;
    ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
    zshard_rt_set_current_mem_ctx(ctx);
    std::vector<float> data(2000, 1.0f), out(1000);
    comm.reduceScatter(data.data(), out.data(), 1000, CommDType::F32,
                       ReduceOp::Sum);
    EXPECT_EQ(peakBytes(ctx), 0u) << "out of place needs no scratch";
    Request request = comm.startReduceScatter(data.data(), data.data(), 1000,
                                              CommDType::F32, ReduceOp::Sum);
    request.wait();
    EXPECT_EQ(peakBytes(ctx), 4000u);
    EXPECT_EQ(liveBytes(ctx), 0u);
    EXPECT_EQ(data[999], 2.0f);
    zshard_rt_set_current_mem_ctx(nullptr);
    zshard_rt_mem_ctx_destroy(ctx);
  });
}

TEST(LocalGroupTest, DroppedRequestsAreWaitedFor) {
  LocalWorld world(3);
  onRanks(world, [&](Communicator &comm) {
    std::vector<int32_t> mine(100, comm.rank()), all(300, -1);
    {
      Request request =
          comm.startAllGather(mine.data(), all.data(), 100, CommDType::I32);
    }
    EXPECT_EQ(all[0], 0);
    EXPECT_EQ(all[299], 2);
  });
}

TEST(CommAbiTest, ArgumentChecks) {
  zshard_rt_local_world *world = nullptr;
  EXPECT_EQ(zshard_rt_local_world_create(0, 0, 0, &world),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(world, nullptr);
  EXPECT_EQ(zshard_rt_local_world_create(2, -1, 0, &world),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zshard_rt_last_error_message()).find("linkGbps"),
            std::string::npos);
  ASSERT_EQ(zshard_rt_local_world_create(1, 0, 0, &world), ZSHARD_RT_OK);
  zshard_rt_comm *comm = nullptr;
  EXPECT_EQ(zshard_rt_local_world_comm(world, 1, &comm),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(zshard_rt_local_world_comm(world, 0, &comm), ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_comm_destroy(comm), ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  zshard_rt_grid *grid = nullptr;
  const int64_t shape[7] = {1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(zshard_rt_grid_create(comm, 7, shape, &grid),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_grid_create(comm, 1, nullptr, &grid),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_comm_destroy(nullptr), ZSHARD_RT_OK);
  zshard_rt_grid_destroy(nullptr);
  zshard_rt_local_world_destroy(world);
}

namespace {

/// A one-rank world with a {1, 1} grid current on this thread (the death
/// tests' child process builds its own).
class StepFatalTest : public testing::Test {
protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ASSERT_EQ(zshard_rt_local_world_create(1, 0, 0, &world), ZSHARD_RT_OK);
    zshard_rt_comm *comm = nullptr;
    ASSERT_EQ(zshard_rt_local_world_comm(world, 0, &comm), ZSHARD_RT_OK);
    const int64_t shape[2] = {1, 1};
    ASSERT_EQ(zshard_rt_grid_create(comm, 2, shape, &grid), ZSHARD_RT_OK);
    zshard_rt_set_current_grid(grid);
  }
  void TearDown() override {
    zshard_rt_set_current_grid(nullptr);
    zshard_rt_grid_destroy(grid);
    zshard_rt_local_world_destroy(world);
  }

  zshard_rt_local_world *world = nullptr;
  zshard_rt_grid *grid = nullptr;
  float data[8] = {0};
};

} // namespace

TEST_F(StepFatalTest, WorksWithAGrid) {
  zshard_rt_step_all_reduce(0b11, data, data + 4, 4, ZSHARD_RT_COMM_F32,
                            ZSHARD_RT_REDUCE_AVG);
  EXPECT_EQ(zshard_rt_step_grid_coord(1), 0);
  EXPECT_EQ(zshard_rt_step_grid_size(0), 1);
}

TEST_F(StepFatalTest, AbortsOnMisuse) {
  const char *prefix = "^zshard runtime: fatal: ";
  EXPECT_DEATH(
      zshard_rt_step_all_gather(0b100, data, data + 4, 1, ZSHARD_RT_COMM_F32),
      std::string(prefix) +
          "zshard_rt_step_all_gather: axes mask 0x4 names an axis "
          "outside the 2-axis grid\n");
  EXPECT_DEATH(zshard_rt_step_all_reduce(1, data, data + 4, 1, 7, 0),
               std::string(prefix) +
                   "zshard_rt_step_all_reduce: dtype 7 is not a collective "
                   "dtype");
  EXPECT_DEATH(zshard_rt_step_reduce_scatter(1, data, data + 4, 1, 0, 3),
               "zshard_rt_step_reduce_scatter: op 3 is not a reduction");
  EXPECT_DEATH(zshard_rt_step_all_reduce(1, data, data + 4, 1,
                                         ZSHARD_RT_COMM_I32,
                                         ZSHARD_RT_REDUCE_AVG),
               "zshard_rt_step_all_reduce: local allReduce: avg is not "
               "defined for i32");
  EXPECT_DEATH(zshard_rt_step_all_reduce_start(1, data, data + 4, -2,
                                               ZSHARD_RT_COMM_F32,
                                               ZSHARD_RT_REDUCE_SUM),
               "zshard_rt_step_all_reduce_start: local allReduce: count -2 "
               "is negative");
  EXPECT_DEATH(zshard_rt_step_all_reduce(1, data, data + 1, 4,
                                         ZSHARD_RT_COMM_F32,
                                         ZSHARD_RT_REDUCE_SUM),
               "send and recv overlap without being in place");
  EXPECT_DEATH(zshard_rt_step_grid_coord(2),
               "zshard_rt_step_grid_coord: axis 2 is not an axis of the "
               "2-axis grid");
  EXPECT_DEATH(zshard_rt_step_wait(12345),
               "zshard_rt_step_wait: handle 12345 is not a pending collective");
  EXPECT_DEATH(
      {
        int64_t handle = zshard_rt_step_all_gather_start(1, data, data + 4, 1,
                                                         ZSHARD_RT_COMM_F32);
        zshard_rt_step_wait(handle);
        zshard_rt_step_wait(handle);
      },
      "zshard_rt_step_wait: handle [0-9]+ is not a pending collective");
  zshard_rt_set_current_grid(nullptr);
  EXPECT_DEATH(
      zshard_rt_step_all_gather(1, data, data + 4, 1, ZSHARD_RT_COMM_F32),
      std::string(prefix) +
          "zshard_rt_step_all_gather: no current grid on this "
          "thread");
}
