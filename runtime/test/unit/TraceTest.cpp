//===- TraceTest.cpp - Traces, collective units, memory timelines ---------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The C entries behind zshard-run --trace and --memory-timeline: the clock,
// traces (record, read, clear, per-thread current trace, argument checks),
// zshard_rt_step_set_collective_unit, the communication wait counters, and
// memory timelines (an entry per change, from any thread, start and stop).
// Collectives recording into traces are tested with the local backend in
// test/comm/LocalOnlyTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

namespace {

zshard_rt_trace_event eventOf(int32_t lane, int32_t kind, int32_t unit,
                              double begin, double end) {
  zshard_rt_trace_event event;
  std::memset(&event, 0, sizeof(event));
  event.lane = lane;
  event.kind = kind;
  event.unit = unit;
  event.started = 1;
  event.bytes = 4096;
  event.begin = begin;
  event.end = end;
  return event;
}

std::string lastError() { return zshard_rt_last_error_message(); }

} // namespace

TEST(ClockTest, IsMonotonicSeconds) {
  double a = zshard_rt_clock_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  double b = zshard_rt_clock_seconds();
  EXPECT_GE(b - a, 0.002);
  EXPECT_LT(b - a, 1.0);
}

TEST(TraceTest, CollectiveKindNames) {
  EXPECT_STREQ(zshard_rt_collective_kind_name(ZSHARD_RT_COLLECTIVE_ALL_GATHER),
               "all_gather");
  EXPECT_STREQ(
      zshard_rt_collective_kind_name(ZSHARD_RT_COLLECTIVE_REDUCE_SCATTER),
      "reduce_scatter");
  EXPECT_STREQ(zshard_rt_collective_kind_name(ZSHARD_RT_COLLECTIVE_ALL_REDUCE),
               "all_reduce");
  EXPECT_STREQ(zshard_rt_collective_kind_name(ZSHARD_RT_COLLECTIVE_BARRIER),
               "barrier");
  EXPECT_EQ(zshard_rt_collective_kind_name(4), nullptr);
  EXPECT_EQ(zshard_rt_collective_kind_name(-1), nullptr);
}

TEST(TraceTest, RecordsReadsAndClears) {
  zshard_rt_trace *trace = nullptr;
  ASSERT_EQ(zshard_rt_trace_create(&trace), ZSHARD_RT_OK);
  uint64_t count = 99;
  ASSERT_EQ(zshard_rt_trace_event_count(trace, &count), ZSHARD_RT_OK);
  EXPECT_EQ(count, 0u);

  zshard_rt_trace_event a = eventOf(ZSHARD_RT_TRACE_COMPUTE,
                                    ZSHARD_RT_COLLECTIVE_ALL_GATHER, 3, 1, 2);
  zshard_rt_trace_event b = eventOf(ZSHARD_RT_TRACE_COMMUNICATION,
                                    ZSHARD_RT_COLLECTIVE_BARRIER, -1, 2, 4);
  ASSERT_EQ(zshard_rt_trace_record(trace, &a), ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_trace_record(trace, &b), ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_trace_event_count(trace, &count), ZSHARD_RT_OK);
  EXPECT_EQ(count, 2u);
  zshard_rt_trace_event got;
  ASSERT_EQ(zshard_rt_trace_get_event(trace, 1, &got), ZSHARD_RT_OK);
  EXPECT_EQ(std::memcmp(&got, &b, sizeof(got)), 0);
  ASSERT_EQ(zshard_rt_trace_get_event(trace, 0, &got), ZSHARD_RT_OK);
  EXPECT_EQ(got.unit, 3);
  EXPECT_EQ(got.bytes, 4096u);

  EXPECT_EQ(zshard_rt_trace_get_event(trace, 2, &got),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(),
            "zshard_rt_trace_get_event: index 2 is past the 2 events");
  zshard_rt_trace_event bad = a;
  bad.lane = 2;
  EXPECT_EQ(zshard_rt_trace_record(trace, &bad),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "zshard_rt_trace_record: lane 2 is not a trace lane");
  bad = a;
  bad.kind = 7;
  EXPECT_EQ(zshard_rt_trace_record(trace, &bad),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(),
            "zshard_rt_trace_record: kind 7 is not a collective kind");
  EXPECT_EQ(zshard_rt_trace_record(trace, nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_trace_record(nullptr, &a),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_trace_event_count(nullptr, &count),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_trace_create(nullptr), ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_trace_clear(nullptr), ZSHARD_RT_ERROR_INVALID_ARGUMENT);

  ASSERT_EQ(zshard_rt_trace_clear(trace), ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_trace_event_count(trace, &count), ZSHARD_RT_OK);
  EXPECT_EQ(count, 0u);
  zshard_rt_trace_destroy(trace);
  zshard_rt_trace_destroy(nullptr);
}

TEST(TraceTest, CurrentTraceIsPerThread) {
  EXPECT_EQ(zshard_rt_current_trace(), nullptr);
  zshard_rt_trace *trace = nullptr;
  ASSERT_EQ(zshard_rt_trace_create(&trace), ZSHARD_RT_OK);
  zshard_rt_set_current_trace(trace);
  EXPECT_EQ(zshard_rt_current_trace(), trace);
  zshard_rt_trace *seen = trace;
  std::thread([&] { seen = zshard_rt_current_trace(); }).join();
  EXPECT_EQ(seen, nullptr);
  zshard_rt_set_current_trace(nullptr);
  EXPECT_EQ(zshard_rt_current_trace(), nullptr);
  zshard_rt_trace_destroy(trace);
}

TEST(TraceTest, ThreadsRecordIntoOneTrace) {
  zshard_rt_trace *trace = nullptr;
  ASSERT_EQ(zshard_rt_trace_create(&trace), ZSHARD_RT_OK);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        zshard_rt_trace_event e =
            eventOf(ZSHARD_RT_TRACE_COMMUNICATION,
                    ZSHARD_RT_COLLECTIVE_ALL_REDUCE, t, i, i + 1);
        EXPECT_EQ(zshard_rt_trace_record(trace, &e), ZSHARD_RT_OK);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  uint64_t count = 0;
  ASSERT_EQ(zshard_rt_trace_event_count(trace, &count), ZSHARD_RT_OK);
  EXPECT_EQ(count, 4000u);
  zshard_rt_trace_destroy(trace);
}

TEST(CollectiveUnitTest, IsPerThreadAndSticky) {
  EXPECT_EQ(zshard_rt_step_collective_unit(), -1);
  zshard_rt_step_set_collective_unit(5);
  EXPECT_EQ(zshard_rt_step_collective_unit(), 5);
  int32_t seen = 0;
  std::thread([&] { seen = zshard_rt_step_collective_unit(); }).join();
  EXPECT_EQ(seen, -1);
  zshard_rt_step_set_collective_unit(0);
  EXPECT_EQ(zshard_rt_step_collective_unit(), 0);
  zshard_rt_step_set_collective_unit(-1);
  EXPECT_EQ(zshard_rt_step_collective_unit(), -1);
}

TEST(CollectiveUnitTest, AbortsBelowMinusOne) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(zshard_rt_step_set_collective_unit(-2),
               "^zshard runtime: fatal: zshard_rt_step_set_collective_unit: "
               "unit index -2 is neither -1 \\(none\\) nor an index of the "
               "manifest's units\n");
}

TEST(CommCountersTest, StartAtZeroAndReset) {
  std::thread([] {
    EXPECT_EQ(zshard_rt_step_comm_wait_seconds(), 0.0);
    EXPECT_EQ(zshard_rt_step_comm_wait_calls(), 0u);
  }).join();
  zshard_rt_step_comm_reset_counters();
  EXPECT_EQ(zshard_rt_step_comm_wait_seconds(), 0.0);
}

namespace {
uint64_t liveAt(zshard_rt_mem_ctx *ctx, uint64_t index,
                zshard_rt_mem_category category, double *seconds = nullptr) {
  uint64_t live[ZSHARD_RT_MEM_NUM_CATEGORIES] = {0};
  double t = 0;
  EXPECT_EQ(zshard_rt_mem_timeline_entry(ctx, index, &t, live), ZSHARD_RT_OK);
  if (seconds)
    *seconds = t;
  return live[category];
}
uint64_t timelineSize(zshard_rt_mem_ctx *ctx) {
  uint64_t size = 0;
  EXPECT_EQ(zshard_rt_mem_timeline_size(ctx, &size), ZSHARD_RT_OK);
  return size;
}
} // namespace

TEST(MemoryTimelineTest, OneEntryPerChangeWhileRecording) {
  zshard_rt_mem_ctx *ctx = nullptr;
  ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_PARAMETERS, 100),
            ZSHARD_RT_OK);
  EXPECT_EQ(timelineSize(ctx), 0u) << "nothing is recorded before a start";

  double before = zshard_rt_clock_seconds();
  ASSERT_EQ(zshard_rt_mem_timeline_start(ctx), ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_ACTIVATIONS, 40),
            ZSHARD_RT_OK);
  void *block = nullptr;
  ASSERT_EQ(
      zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_COMMUNICATION, 64, 0, &block),
      ZSHARD_RT_OK);
  std::thread([&] {
    EXPECT_EQ(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_ACTIVATIONS, 40),
              ZSHARD_RT_OK);
  }).join();
  ASSERT_EQ(zshard_rt_cpu_free(ctx, block), ZSHARD_RT_OK);
  // A refused free changes nothing and records nothing.
  EXPECT_EQ(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_GRADIENTS, 1),
            ZSHARD_RT_ERROR_ACCOUNTING);
  ASSERT_EQ(zshard_rt_mem_timeline_stop(ctx), ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_OTHER, 1),
            ZSHARD_RT_OK);
  double after = zshard_rt_clock_seconds();

  ASSERT_EQ(timelineSize(ctx), 5u);
  const uint64_t activations[] = {0, 40, 40, 0, 0};
  const uint64_t communication[] = {0, 0, 64, 64, 0};
  double last = before;
  for (uint64_t i = 0; i < 5; ++i) {
    double t = 0;
    EXPECT_EQ(liveAt(ctx, i, ZSHARD_RT_MEM_PARAMETERS, &t), 100u);
    EXPECT_EQ(liveAt(ctx, i, ZSHARD_RT_MEM_ACTIVATIONS), activations[i]) << i;
    EXPECT_EQ(liveAt(ctx, i, ZSHARD_RT_MEM_COMMUNICATION), communication[i])
        << i;
    EXPECT_EQ(liveAt(ctx, i, ZSHARD_RT_MEM_OTHER), 0u);
    EXPECT_GE(t, last);
    EXPECT_LE(t, after);
    last = t;
  }

  // A new start drops the old timeline.
  ASSERT_EQ(zshard_rt_mem_timeline_start(ctx), ZSHARD_RT_OK);
  EXPECT_EQ(timelineSize(ctx), 1u);
  EXPECT_EQ(liveAt(ctx, 0, ZSHARD_RT_MEM_OTHER), 1u);
  zshard_rt_mem_ctx_destroy(ctx);
}

TEST(MemoryTimelineTest, ArgumentChecks) {
  zshard_rt_mem_ctx *ctx = nullptr;
  ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  uint64_t live[ZSHARD_RT_MEM_NUM_CATEGORIES];
  double t = 0;
  EXPECT_EQ(zshard_rt_mem_timeline_entry(ctx, 0, &t, live),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(),
            "zshard_rt_mem_timeline_entry: index 0 is past the 0 entries");
  EXPECT_EQ(zshard_rt_mem_timeline_entry(ctx, 0, nullptr, live),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_mem_timeline_entry(ctx, 0, &t, nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_mem_timeline_start(nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "zshard_rt_mem_timeline_start: ctx is NULL");
  EXPECT_EQ(zshard_rt_mem_timeline_stop(nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  uint64_t size = 0;
  EXPECT_EQ(zshard_rt_mem_timeline_size(nullptr, &size),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_mem_timeline_size(ctx, nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  zshard_rt_mem_ctx_destroy(ctx);
}
