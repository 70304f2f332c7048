//===- CpuAllocTest.cpp - Tests of aligned host allocation ----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

namespace {

class CpuAllocTest : public ::testing::Test {
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

  zshard_rt_mem_ctx *ctx = nullptr;
};

bool isAligned(const void *ptr, uint64_t alignment) {
  return reinterpret_cast<uintptr_t>(ptr) % alignment == 0;
}

} // namespace

// Tests that every power-of-two alignment up to 2 MiB is honoured, for sizes
// that are and are not multiples of it, and that the memory is writable.
TEST_F(CpuAllocTest, Alignment) {
  for (uint64_t alignment = 1; alignment <= (uint64_t(1) << 21);
       alignment *= 2) {
    for (uint64_t bytes : {uint64_t(1), uint64_t(3), uint64_t(100),
                           uint64_t(4096), uint64_t(65537)}) {
      void *ptr = nullptr;
      ASSERT_EQ(zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_ACTIVATIONS, bytes,
                                    alignment, &ptr),
                ZSHARD_RT_OK)
          << zshard_rt_last_error_message();
      ASSERT_NE(ptr, nullptr);
      EXPECT_TRUE(isAligned(ptr, alignment))
          << ptr << " not aligned to " << alignment;
      std::memset(ptr, 0xab, bytes);
      EXPECT_EQ(live(ZSHARD_RT_MEM_ACTIVATIONS), bytes);
      ASSERT_EQ(zshard_rt_cpu_free(ctx, ptr), ZSHARD_RT_OK);
      EXPECT_EQ(live(ZSHARD_RT_MEM_ACTIVATIONS), 0u);
    }
  }
}

// Tests that alignment 0 means the default (64).
TEST_F(CpuAllocTest, DefaultAlignment) {
  std::vector<void *> blocks;
  for (int i = 0; i < 16; ++i) {
    void *ptr = nullptr;
    ASSERT_EQ(zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_OTHER, 8 * i + 1, 0, &ptr),
              ZSHARD_RT_OK);
    EXPECT_TRUE(isAligned(ptr, ZSHARD_RT_CPU_DEFAULT_ALIGNMENT));
    blocks.push_back(ptr);
  }
  for (void *ptr : blocks)
    ASSERT_EQ(zshard_rt_cpu_free(ctx, ptr), ZSHARD_RT_OK);
}

// Tests that allocations are recorded in their category with the bytes asked
// for, and that free needs only the pointer.
TEST_F(CpuAllocTest, RecordsIntoCategory) {
  void *params = nullptr, *grads = nullptr, *empty = nullptr;
  ASSERT_EQ(
      zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_PARAMETERS, 1000, 128, &params),
      ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_GRADIENTS, 250, 0, &grads),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_OTHER, 0, 0, &empty),
            ZSHARD_RT_OK);
  EXPECT_NE(empty, nullptr);
  EXPECT_EQ(live(ZSHARD_RT_MEM_PARAMETERS), 1000u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_GRADIENTS), 250u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_OTHER), 0u);
  ASSERT_EQ(zshard_rt_cpu_free(ctx, params), ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_cpu_free(ctx, empty), ZSHARD_RT_OK);
  EXPECT_EQ(live(ZSHARD_RT_MEM_PARAMETERS), 0u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_GRADIENTS), 250u);
  uint64_t peak = 0;
  ASSERT_EQ(zshard_rt_mem_total_peak_bytes(ctx, &peak), ZSHARD_RT_OK);
  EXPECT_EQ(peak, 1250u);
  ASSERT_EQ(zshard_rt_cpu_free(ctx, grads), ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_cpu_free(ctx, nullptr), ZSHARD_RT_OK);
}

// Tests that bad alignments, bad categories and NULLs are rejected, and that
// a block cannot be freed through another context.
TEST_F(CpuAllocTest, InvalidArguments) {
  void *ptr = reinterpret_cast<void *>(0x1);
  EXPECT_EQ(zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_OTHER, 16, 48, &ptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_OTHER, 16, uint64_t(1) << 22,
                                &ptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_NUM_CATEGORIES, 16, 0, &ptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_cpu_alloc(nullptr, ZSHARD_RT_MEM_OTHER, 16, 0, &ptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_OTHER, 16, 0, nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(
      zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_OTHER, ~uint64_t(0), 0, &ptr),
      ZSHARD_RT_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(ptr, nullptr);

  zshard_rt_mem_ctx *other = nullptr;
  ASSERT_EQ(zshard_rt_mem_ctx_create(&other), ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_OTHER, 32, 0, &ptr),
            ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_cpu_free(other, ptr), ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(live(ZSHARD_RT_MEM_OTHER), 32u);
  EXPECT_EQ(zshard_rt_cpu_free(ctx, ptr), ZSHARD_RT_OK);
  zshard_rt_mem_ctx_destroy(other);
}

// Tests that threads allocating and freeing through one context leave exact
// accounts.
TEST_F(CpuAllocTest, ConcurrentAllocAndFree) {
  constexpr int numThreads = 6;
  constexpr int iterations = 500;
  std::vector<std::thread> threads;
  std::vector<int> failures(numThreads, 0);
  for (int t = 0; t < numThreads; ++t) {
    threads.emplace_back([&, t] {
      auto category = static_cast<zshard_rt_mem_category>(t);
      std::vector<void *> blocks;
      for (int i = 0; i < iterations; ++i) {
        void *ptr = nullptr;
        if (zshard_rt_cpu_alloc(ctx, category, 24 + i, 0, &ptr) != ZSHARD_RT_OK)
          ++failures[t];
        blocks.push_back(ptr);
      }
      for (void *ptr : blocks)
        if (zshard_rt_cpu_free(ctx, ptr) != ZSHARD_RT_OK)
          ++failures[t];
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < numThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
  uint64_t total = ~uint64_t(0);
  ASSERT_EQ(zshard_rt_mem_total_live_bytes(ctx, &total), ZSHARD_RT_OK);
  EXPECT_EQ(total, 0u);
  uint64_t expectedPeakPerCategory = 0;
  for (int i = 0; i < iterations; ++i)
    expectedPeakPerCategory += 24 + i;
  for (int t = 0; t < numThreads; ++t) {
    uint64_t peak = 0;
    ASSERT_EQ(zshard_rt_mem_peak_bytes(
                  ctx, static_cast<zshard_rt_mem_category>(t), &peak),
              ZSHARD_RT_OK);
    EXPECT_EQ(peak, expectedPeakPerCategory);
  }
}
