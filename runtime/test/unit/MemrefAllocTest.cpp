//===- MemrefAllocTest.cpp - Tests of the MLIR allocation hooks -----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

namespace {

uint64_t live(zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category) {
  uint64_t bytes = ~uint64_t(0);
  EXPECT_EQ(zshard_rt_mem_live_bytes(ctx, category, &bytes), ZSHARD_RT_OK);
  return bytes;
}

uint64_t peak(zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category) {
  uint64_t bytes = ~uint64_t(0);
  EXPECT_EQ(zshard_rt_mem_peak_bytes(ctx, category, &bytes), ZSHARD_RT_OK);
  return bytes;
}

bool isAligned(const void *ptr, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(ptr) % alignment == 0;
}

class MemrefAllocTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
    zshard_rt_set_current_mem_ctx(ctx);
  }
  void TearDown() override {
    zshard_rt_set_current_mem_ctx(nullptr);
    zshard_rt_mem_ctx_destroy(ctx);
  }
  zshard_rt_mem_ctx *ctx = nullptr;
};

} // namespace

// Tests that both hooks charge the current context's activations, align to
// at least 64 bytes, and that free credits them back.
TEST_F(MemrefAllocTest, ChargesActivationsOfTheCurrentContext) {
  EXPECT_EQ(zshard_rt_current_mem_ctx(), ctx);
  void *a = _mlir_memref_to_llvm_alloc(1000);
  void *b = _mlir_memref_to_llvm_aligned_alloc(256, 24);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(isAligned(a, 64));
  EXPECT_TRUE(isAligned(b, 256));
  std::memset(a, 1, 1000);
  std::memset(b, 2, 24);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_ACTIVATIONS), 1024u);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_PARAMETERS), 0u);
  _mlir_memref_to_llvm_free(b);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_ACTIVATIONS), 1000u);
  _mlir_memref_to_llvm_free(a);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_ACTIVATIONS), 0u);
  EXPECT_EQ(peak(ctx, ZSHARD_RT_MEM_ACTIVATIONS), 1024u);
}

// Tests that small, odd and zero alignments round up to a power of two of at
// least 64, and that zero-byte blocks are distinct and freeable.
TEST_F(MemrefAllocTest, AlignmentsAndZeroBytes) {
  for (size_t alignment : {0, 1, 3, 8, 48, 64, 100, 4096, 1 << 21}) {
    void *p = _mlir_memref_to_llvm_aligned_alloc(alignment, 10);
    size_t want = 64;
    while (want < alignment)
      want <<= 1;
    EXPECT_TRUE(isAligned(p, want)) << "alignment " << alignment;
    _mlir_memref_to_llvm_free(p);
  }
  void *x = _mlir_memref_to_llvm_alloc(0);
  void *y = _mlir_memref_to_llvm_alloc(0);
  EXPECT_NE(x, nullptr);
  EXPECT_NE(x, y);
  _mlir_memref_to_llvm_free(x);
  _mlir_memref_to_llvm_free(y);
  _mlir_memref_to_llvm_free(nullptr);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_ACTIVATIONS), 0u);
}

// Tests that a block is credited to the context it was charged to, even when
// another context is current at free time or it is freed on another thread.
TEST_F(MemrefAllocTest, FreeCreditsTheBlocksOwnContext) {
  void *p = _mlir_memref_to_llvm_alloc(512);
  zshard_rt_mem_ctx *other = nullptr;
  ASSERT_EQ(zshard_rt_mem_ctx_create(&other), ZSHARD_RT_OK);
  zshard_rt_set_current_mem_ctx(other);
  _mlir_memref_to_llvm_free(p);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_ACTIVATIONS), 0u);
  EXPECT_EQ(live(other, ZSHARD_RT_MEM_ACTIVATIONS), 0u);

  zshard_rt_set_current_mem_ctx(ctx);
  void *q = _mlir_memref_to_llvm_alloc(64);
  std::thread([q] { _mlir_memref_to_llvm_free(q); }).join();
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_ACTIVATIONS), 0u);
  zshard_rt_mem_ctx_destroy(other);
}

// Tests that the current context is per thread, and that without one the
// process-wide default context is charged.
TEST_F(MemrefAllocTest, DefaultContextWhenNoneIsSet) {
  zshard_rt_mem_ctx *fallback = zshard_rt_default_mem_ctx();
  ASSERT_NE(fallback, nullptr);
  EXPECT_NE(fallback, ctx);
  uint64_t before = live(fallback, ZSHARD_RT_MEM_ACTIVATIONS);
  std::thread([&] {
    EXPECT_EQ(zshard_rt_current_mem_ctx(), fallback);
    void *p = _mlir_memref_to_llvm_alloc(100);
    EXPECT_EQ(live(fallback, ZSHARD_RT_MEM_ACTIVATIONS), before + 100);
    _mlir_memref_to_llvm_free(p);
  }).join();
  EXPECT_EQ(live(fallback, ZSHARD_RT_MEM_ACTIVATIONS), before);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_ACTIVATIONS), 0u);
  zshard_rt_set_current_mem_ctx(nullptr);
  EXPECT_EQ(zshard_rt_current_mem_ctx(), fallback);
}

// Tests that freeing memory the runtime did not allocate aborts with a
// message instead of corrupting the accounting. (A double free is caught the
// same way in practice, but reading a freed header is undefined behaviour, so
// it is not tested.)
TEST(MemrefAllocDeathTest, ForeignFreeAborts) {
  EXPECT_DEATH(
      {
        alignas(64) static char buffer[256] = {};
        _mlir_memref_to_llvm_free(buffer + 128);
      },
      "_mlir_memref_to_llvm_free: .* was not allocated by the runtime");
  EXPECT_DEATH(_mlir_memref_to_llvm_aligned_alloc(size_t(1) << 22, 8),
               "alignment 4194304 is above the 2 MiB limit");
}
