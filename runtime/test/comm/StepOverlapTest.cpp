//===- StepOverlapTest.cpp - Step collectives overlap, counted and traced -===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// What zshard-run's --link-gbps, exposed communication and --trace rest on,
// through the step ABI on a local world with an emulated link: a started
// all-gather progresses on the group's progress thread while the rank's
// thread computes, so a wait after enough compute returns at once; a wait
// right after the start takes the whole transfer. The time blocked is what
// zshard_rt_step_comm_wait_seconds() counts, and a current trace gets the
// blocked span on the compute lane and the transfer on the communication
// lane, named by zshard_rt_step_set_collective_unit().
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <thread>
#include <vector>

namespace {

/// 0.1 Gbit/s: an all-gather of 250000 floats per rank over 2 ranks puts
/// 1 MB on each rank's wire, 80 ms.
constexpr double linkGbps = 0.1;
constexpr int64_t countPerRank = 250000;
constexpr double transfer = countPerRank * 4.0 * 8 / (linkGbps * 1e9);

/// Runs body(rank) on 2 thread ranks of a local world with the link above,
/// each with a grid [2] and its own trace current.
void onTwoRanks(const std::function<void(int, zshard_rt_trace *)> &body) {
  zshard_rt_local_world *world = nullptr;
  ASSERT_EQ(zshard_rt_local_world_create(2, linkGbps, 0, &world), ZSHARD_RT_OK);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      zshard_rt_comm *comm = nullptr;
      ASSERT_EQ(zshard_rt_local_world_comm(world, r, &comm), ZSHARD_RT_OK);
      zshard_rt_grid *grid = nullptr;
      const int64_t shape[1] = {2};
      ASSERT_EQ(zshard_rt_grid_create(comm, 1, shape, &grid), ZSHARD_RT_OK);
      zshard_rt_trace *trace = nullptr;
      ASSERT_EQ(zshard_rt_trace_create(&trace), ZSHARD_RT_OK);
      zshard_rt_set_current_grid(grid);
      zshard_rt_set_current_trace(trace);
      body(r, trace);
      zshard_rt_set_current_trace(nullptr);
      zshard_rt_set_current_grid(nullptr);
      zshard_rt_step_set_collective_unit(-1);
      zshard_rt_grid_destroy(grid);
      zshard_rt_trace_destroy(trace);
    });
  for (std::thread &thread : threads)
    thread.join();
  zshard_rt_local_world_destroy(world);
}

/// Lines the ranks up: a barrier-like all-reduce of one float.
void together() {
  float one = 1;
  zshard_rt_step_all_reduce(1, &one, &one, 1, ZSHARD_RT_COMM_F32,
                            ZSHARD_RT_REDUCE_SUM);
}

/// Compute-like busy work on the calling thread until \p seconds from
/// \p start (clock seconds).
void computeUntil(double start, double seconds) {
  float acc = 0;
  while (zshard_rt_clock_seconds() - start < seconds)
    for (int i = 0; i < 1000; ++i)
      acc = std::fma(acc, 0.999f, std::sin(float(i)));
  volatile float sink = acc;
  (void)sink;
}

std::vector<zshard_rt_trace_event> eventsOf(zshard_rt_trace *trace) {
  uint64_t count = 0;
  EXPECT_EQ(zshard_rt_trace_event_count(trace, &count), ZSHARD_RT_OK);
  std::vector<zshard_rt_trace_event> events(count);
  for (uint64_t i = 0; i < count; ++i)
    EXPECT_EQ(zshard_rt_trace_get_event(trace, i, &events[i]), ZSHARD_RT_OK);
  return events;
}

} // namespace

// A started all-gather over an 80 ms link, then 160 ms of compute: the
// transfer finishes during the compute, and the wait returns almost at once.
TEST(StepOverlapTest, WaitAfterLongerComputeReturnsAtOnce) {
  onTwoRanks([](int rank, zshard_rt_trace *trace) {
    std::vector<float> shard(size_t(countPerRank), float(rank + 1));
    std::vector<float> full(size_t(2 * countPerRank), 0);
    together();
    zshard_rt_trace_clear(trace);
    zshard_rt_step_comm_reset_counters();
    zshard_rt_step_set_collective_unit(7);

    double start = zshard_rt_clock_seconds();
    int64_t handle = zshard_rt_step_all_gather_start(
        1, shard.data(), full.data(), countPerRank, ZSHARD_RT_COMM_F32);
    EXPECT_LT(zshard_rt_clock_seconds() - start, transfer / 2)
        << "the start blocked for the transfer";
    computeUntil(start, 2 * transfer);
    double waitBegin = zshard_rt_clock_seconds();
    zshard_rt_step_wait(handle);
    double waited = zshard_rt_clock_seconds() - waitBegin;
    EXPECT_LT(waited, transfer / 2) << "the transfer did not progress while "
                                       "the rank computed";
    EXPECT_EQ(full[0], 1.0f);
    EXPECT_EQ(full[size_t(2 * countPerRank - 1)], 2.0f);

    EXPECT_EQ(zshard_rt_step_comm_wait_calls(), 1u);
    EXPECT_LE(zshard_rt_step_comm_wait_seconds(), waited + 1e-3);

    std::vector<zshard_rt_trace_event> events = eventsOf(trace);
    ASSERT_EQ(events.size(), 2u);
    const zshard_rt_trace_event *blocked = nullptr, *moved = nullptr;
    for (const zshard_rt_trace_event &e : events)
      (e.lane == ZSHARD_RT_TRACE_COMPUTE ? blocked : moved) = &e;
    ASSERT_TRUE(blocked && moved);
    for (const zshard_rt_trace_event *e : {blocked, moved}) {
      EXPECT_EQ(e->kind, ZSHARD_RT_COLLECTIVE_ALL_GATHER);
      EXPECT_EQ(e->unit, 7);
      EXPECT_EQ(e->started, 1);
      EXPECT_EQ(e->bytes, uint64_t(2 * countPerRank * 4));
    }
    EXPECT_GE(blocked->begin, waitBegin);
    EXPECT_LT(blocked->end - blocked->begin, transfer / 2);
    // The transfer ran on the progress thread, during the compute.
    EXPECT_GE(moved->begin, start);
    EXPECT_GE(moved->end - moved->begin, transfer * 0.9);
    EXPECT_LE(moved->end, blocked->end);
  });
}

// Waited for right after the start, the same all-gather blocks the rank for
// the whole transfer; a blocking one does too. Both count as exposed.
TEST(StepOverlapTest, WaitRightAfterTheStartTakesTheTransfer) {
  onTwoRanks([](int rank, zshard_rt_trace *trace) {
    std::vector<float> shard(size_t(countPerRank), float(rank + 1));
    std::vector<float> full(size_t(2 * countPerRank), 0);
    together();
    zshard_rt_trace_clear(trace);
    zshard_rt_step_comm_reset_counters();
    zshard_rt_step_set_collective_unit(-1);

    int64_t handle = zshard_rt_step_all_gather_start(
        1, shard.data(), full.data(), countPerRank, ZSHARD_RT_COMM_F32);
    double waitBegin = zshard_rt_clock_seconds();
    zshard_rt_step_wait(handle);
    double waited = zshard_rt_clock_seconds() - waitBegin;
    EXPECT_GE(waited, transfer * 0.9);
    EXPECT_EQ(full[size_t(2 * countPerRank - 1)], 2.0f);

    double begin = zshard_rt_clock_seconds();
    zshard_rt_step_all_gather(1, shard.data(), full.data(), countPerRank,
                              ZSHARD_RT_COMM_F32);
    double blocking = zshard_rt_clock_seconds() - begin;
    EXPECT_GE(blocking, transfer);

    EXPECT_EQ(zshard_rt_step_comm_wait_calls(), 2u);
    EXPECT_GE(zshard_rt_step_comm_wait_seconds(), waited + blocking - 1e-3);
    EXPECT_LE(zshard_rt_step_comm_wait_seconds(), waited + blocking + 1e-3);

    // Each collective: one span per lane, unnamed; the blocking one's
    // communication span runs on the rank's own thread, inside its wait.
    std::vector<zshard_rt_trace_event> events = eventsOf(trace);
    ASSERT_EQ(events.size(), 4u);
    int compute = 0, communication = 0;
    for (const zshard_rt_trace_event &e : events) {
      EXPECT_EQ(e.unit, -1);
      EXPECT_GE(e.end - e.begin, transfer * 0.9);
      (e.lane == ZSHARD_RT_TRACE_COMPUTE ? compute : communication) += 1;
      if (e.lane == ZSHARD_RT_TRACE_COMMUNICATION && e.started == 0) {
        EXPECT_GE(e.begin, begin);
      }
    }
    EXPECT_EQ(compute, 2);
    EXPECT_EQ(communication, 2);
  });
}

// Without a current trace nothing is recorded, but the time is counted.
TEST(StepOverlapTest, NoTraceRecordsNothing) {
  onTwoRanks([](int, zshard_rt_trace *trace) {
    zshard_rt_set_current_trace(nullptr);
    zshard_rt_step_comm_reset_counters();
    float x = 1;
    zshard_rt_step_all_reduce(1, &x, &x, 1, ZSHARD_RT_COMM_F32,
                              ZSHARD_RT_REDUCE_SUM);
    EXPECT_EQ(x, 2.0f);
    EXPECT_EQ(zshard_rt_step_comm_wait_calls(), 1u);
    EXPECT_GT(zshard_rt_step_comm_wait_seconds(), 0.0);
    EXPECT_TRUE(eventsOf(trace).empty());
  });
}
