//===- MemoryAccountingTest.cpp - Tests of memory accounting --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <iterator>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr zshard_rt_mem_category allCategories[] = {
    ZSHARD_RT_MEM_PARAMETERS,      ZSHARD_RT_MEM_GRADIENTS,
    ZSHARD_RT_MEM_OPTIMIZER_STATE, ZSHARD_RT_MEM_ACTIVATIONS,
    ZSHARD_RT_MEM_COMMUNICATION,   ZSHARD_RT_MEM_OTHER,
    ZSHARD_RT_MEM_HOST_OFFLOAD,    ZSHARD_RT_MEM_BUFFERS};
static_assert(std::size(allCategories) == ZSHARD_RT_MEM_NUM_CATEGORIES);

/// A fresh context per test.
class MemoryAccountingTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  }
  void TearDown() override { zshard_rt_mem_ctx_destroy(ctx); }

  uint64_t live(zshard_rt_mem_category category) {
    uint64_t bytes = ~uint64_t(0);
    EXPECT_EQ(zshard_rt_mem_live_bytes(ctx, category, &bytes), ZSHARD_RT_OK);
    return bytes;
  }
  uint64_t peak(zshard_rt_mem_category category) {
    uint64_t bytes = ~uint64_t(0);
    EXPECT_EQ(zshard_rt_mem_peak_bytes(ctx, category, &bytes), ZSHARD_RT_OK);
    return bytes;
  }
  uint64_t totalLive() {
    uint64_t bytes = ~uint64_t(0);
    EXPECT_EQ(zshard_rt_mem_total_live_bytes(ctx, &bytes), ZSHARD_RT_OK);
    return bytes;
  }
  uint64_t totalPeak() {
    uint64_t bytes = ~uint64_t(0);
    EXPECT_EQ(zshard_rt_mem_total_peak_bytes(ctx, &bytes), ZSHARD_RT_OK);
    return bytes;
  }

  zshard_rt_mem_ctx *ctx = nullptr;
};

/// A one-shot barrier (C++17 has no std::barrier).
class Barrier {
public:
  explicit Barrier(int count) : remaining(count) {}
  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex);
    if (--remaining == 0)
      allArrived.notify_all();
    else
      allArrived.wait(lock, [this] { return remaining == 0; });
  }

private:
  std::mutex mutex;
  std::condition_variable allArrived;
  int remaining;
};

} // namespace

// Tests that a new context is empty in every category.
TEST_F(MemoryAccountingTest, StartsEmpty) {
  for (zshard_rt_mem_category category : allCategories) {
    EXPECT_EQ(live(category), 0u);
    EXPECT_EQ(peak(category), 0u);
  }
  EXPECT_EQ(totalLive(), 0u);
  EXPECT_EQ(totalPeak(), 0u);
}

// Tests live and peak per category, and that the total peak is the peak of
// the sum, not the sum of the peaks.
TEST_F(MemoryAccountingTest, LiveAndPeakPerCategory) {
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_PARAMETERS, 1000),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_ACTIVATIONS, 500),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_ACTIVATIONS, 500),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_GRADIENTS, 300),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_ACTIVATIONS, 200),
            ZSHARD_RT_OK);

  EXPECT_EQ(live(ZSHARD_RT_MEM_PARAMETERS), 1000u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_GRADIENTS), 300u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_ACTIVATIONS), 200u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_OPTIMIZER_STATE), 0u);
  EXPECT_EQ(peak(ZSHARD_RT_MEM_ACTIVATIONS), 500u);
  EXPECT_EQ(peak(ZSHARD_RT_MEM_GRADIENTS), 300u);
  EXPECT_EQ(totalLive(), 1500u);
  // Peaks: 1500 (params + first activations), then 1300 and 1500 again.
  EXPECT_EQ(totalPeak(), 1500u);

  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_COMMUNICATION, 1),
            ZSHARD_RT_OK);
  EXPECT_EQ(totalPeak(), 1501u);
}

// Tests that resetting the peaks brings them down to what is live.
TEST_F(MemoryAccountingTest, ResetPeaks) {
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_OTHER, 64),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_ACTIVATIONS, 4096),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_ACTIVATIONS, 4096),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_reset_peaks(ctx), ZSHARD_RT_OK);
  EXPECT_EQ(peak(ZSHARD_RT_MEM_ACTIVATIONS), 0u);
  EXPECT_EQ(peak(ZSHARD_RT_MEM_OTHER), 64u);
  EXPECT_EQ(totalPeak(), 64u);
}

// Tests that freeing more than is live fails, names the category, and
// changes nothing; categories do not lend each other bytes.
TEST_F(MemoryAccountingTest, OverFreeIsAnError) {
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_PARAMETERS, 100),
            ZSHARD_RT_OK);
  zshard_rt_clear_last_error();
  EXPECT_EQ(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_PARAMETERS, 101),
            ZSHARD_RT_ERROR_ACCOUNTING);
  EXPECT_NE(std::strstr(zshard_rt_last_error_message(), "parameters"), nullptr)
      << zshard_rt_last_error_message();
  EXPECT_EQ(live(ZSHARD_RT_MEM_PARAMETERS), 100u);
  EXPECT_EQ(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_GRADIENTS, 1),
            ZSHARD_RT_ERROR_ACCOUNTING);
  EXPECT_EQ(totalLive(), 100u);
  EXPECT_EQ(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_PARAMETERS, 100),
            ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_PARAMETERS, 1),
            ZSHARD_RT_ERROR_ACCOUNTING);
  EXPECT_EQ(totalLive(), 0u);
}

// Tests that a counter overflow fails instead of wrapping around.
TEST_F(MemoryAccountingTest, OverflowIsAnError) {
  ASSERT_EQ(
      zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_OTHER, ~uint64_t(0) - 1),
      ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_PARAMETERS, 2),
            ZSHARD_RT_ERROR_ACCOUNTING);
  EXPECT_EQ(live(ZSHARD_RT_MEM_PARAMETERS), 0u);
  EXPECT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_PARAMETERS, 1),
            ZSHARD_RT_OK);
  EXPECT_EQ(totalLive(), ~uint64_t(0));
}

// Tests that bad arguments are rejected with INVALID_ARGUMENT.
TEST_F(MemoryAccountingTest, InvalidArguments) {
  uint64_t bytes = 0;
  auto bogus =
      static_cast<zshard_rt_mem_category>(ZSHARD_RT_MEM_NUM_CATEGORIES);
  EXPECT_EQ(zshard_rt_mem_record_alloc(ctx, bogus, 1),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_mem_record_alloc(
                ctx, static_cast<zshard_rt_mem_category>(-1), 1),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_mem_record_alloc(nullptr, ZSHARD_RT_MEM_OTHER, 1),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_OTHER, nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_mem_peak_bytes(ctx, bogus, &bytes),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_mem_total_peak_bytes(nullptr, &bytes),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_mem_ctx_create(nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_mem_category_name(bogus), nullptr);
  EXPECT_STREQ(zshard_rt_mem_category_name(ZSHARD_RT_MEM_OPTIMIZER_STATE),
               "optimizer_state");
}

// Tests that threads sharing one context give exact totals: every thread
// allocates, all wait at a barrier (so the peak is exactly everything), then
// all free.
TEST_F(MemoryAccountingTest, ConcurrentThreadsGiveExactTotals) {
  constexpr int numThreads = 8;
  constexpr int iterations = 2000;
  Barrier allocated(numThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < numThreads; ++t) {
    threads.emplace_back([&, t] {
      auto category = allCategories[t % ZSHARD_RT_MEM_NUM_CATEGORIES];
      for (int i = 0; i < iterations; ++i)
        if (zshard_rt_mem_record_alloc(ctx, category, t + 1) != ZSHARD_RT_OK)
          ++failures;
      allocated.arriveAndWait();
      for (int i = 0; i < iterations; ++i)
        if (zshard_rt_mem_record_free(ctx, category, t + 1) != ZSHARD_RT_OK)
          ++failures;
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);

  uint64_t expectedTotal = 0;
  uint64_t expectedPeak[ZSHARD_RT_MEM_NUM_CATEGORIES] = {};
  for (int t = 0; t < numThreads; ++t) {
    // The host pool is accounted, but not in the (device) total.
    if (allCategories[t % ZSHARD_RT_MEM_NUM_CATEGORIES] !=
        ZSHARD_RT_MEM_HOST_OFFLOAD)
      expectedTotal += uint64_t(iterations) * (t + 1);
    expectedPeak[t % ZSHARD_RT_MEM_NUM_CATEGORIES] +=
        uint64_t(iterations) * (t + 1);
  }
  for (zshard_rt_mem_category category : allCategories) {
    EXPECT_EQ(live(category), 0u);
    EXPECT_EQ(peak(category), expectedPeak[category]);
  }
  EXPECT_EQ(totalLive(), 0u);
  EXPECT_EQ(totalPeak(), expectedTotal);
}

// Tests that the host pool (offloaded optimizer state) is accounted in its
// own category and left out of the device totals.
TEST_F(MemoryAccountingTest, HostPoolIsNotInTheTotal) {
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_HOST_OFFLOAD, 500),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_PARAMETERS, 100),
            ZSHARD_RT_OK);
  EXPECT_EQ(live(ZSHARD_RT_MEM_HOST_OFFLOAD), 500u);
  EXPECT_EQ(peak(ZSHARD_RT_MEM_HOST_OFFLOAD), 500u);
  EXPECT_EQ(totalLive(), 100u);
  EXPECT_EQ(totalPeak(), 100u);
  ASSERT_EQ(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_HOST_OFFLOAD, 500),
            ZSHARD_RT_OK);
  EXPECT_EQ(totalLive(), 100u);
  EXPECT_STREQ(zshard_rt_mem_category_name(ZSHARD_RT_MEM_HOST_OFFLOAD),
               "host_offload");
}

// Tests that racing frees never take a category below zero: of more free
// attempts than live bytes, exactly the live bytes succeed.
TEST_F(MemoryAccountingTest, ConcurrentOverFreeIsExact) {
  constexpr int numThreads = 8;
  constexpr int attemptsPerThread = 500;
  constexpr uint64_t liveBytes = 1000;
  ASSERT_EQ(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_GRADIENTS, liveBytes),
            ZSHARD_RT_OK);
  std::atomic<uint64_t> succeeded{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < numThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < attemptsPerThread; ++i) {
        zshard_rt_status s =
            zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_GRADIENTS, 1);
        if (s == ZSHARD_RT_OK)
          ++succeeded;
        else if (s == ZSHARD_RT_ERROR_ACCOUNTING)
          ++refused;
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(succeeded.load(), liveBytes);
  EXPECT_EQ(refused.load(), numThreads * attemptsPerThread - liveBytes);
  EXPECT_EQ(live(ZSHARD_RT_MEM_GRADIENTS), 0u);
}

// Tests that contexts are independent (one per rank).
TEST_F(MemoryAccountingTest, ContextsAreIndependent) {
  zshard_rt_mem_ctx *other = nullptr;
  ASSERT_EQ(zshard_rt_mem_ctx_create(&other), ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_record_alloc(other, ZSHARD_RT_MEM_PARAMETERS, 7),
            ZSHARD_RT_OK);
  EXPECT_EQ(live(ZSHARD_RT_MEM_PARAMETERS), 0u);
  EXPECT_EQ(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_PARAMETERS, 7),
            ZSHARD_RT_ERROR_ACCOUNTING);
  zshard_rt_mem_ctx_destroy(other);
}
