//===- StepGemmBf16Test.cpp - Tests of the compiled-step bf16 product -----===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard_rt_step_gemm_bf16 on the CPU (no current device) against naive loops
// in double over the same bf16 values: every transpose combination, batches
// with gaps between matrices, padded leading dimensions, broadcast operands,
// accumulation into C, the shared counters, the scratch charged to "other"
// for the call only, and the fatal checks. Whichever path the CPU takes:
// oneDNN's native bf16 product (zshard_rt_cpu_native_bf16_gemm() is 1; its
// scratch is charged to "other" too) or the widened panels and sgemm.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

/// The bf16 nearest to \p x (ties to even); inputs here are finite.
uint16_t toBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

double fromBf16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

struct Case {
  int64_t batch, m, n, k;
  bool transA, transB;
  int64_t pad, gap;
  /// Broadcast A or B (stride 0).
  bool broadcastA = false, broadcastB = false;
  /// C += A B; else C = A B with C's matrices NaN before (never read).
  bool accumulate = true;
};

std::string describe(const Case &c) {
  return "batch=" + std::to_string(c.batch) + " m=" + std::to_string(c.m) +
         " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
         " transA=" + std::to_string(c.transA) +
         " transB=" + std::to_string(c.transB) +
         " pad=" + std::to_string(c.pad) + " gap=" + std::to_string(c.gap) +
         " broadcastA=" + std::to_string(c.broadcastA) +
         " broadcastB=" + std::to_string(c.broadcastB) +
         " accumulate=" + std::to_string(c.accumulate);
}

void checkAgainstNaive(const Case &c, unsigned seed) {
  SCOPED_TRACE(describe(c));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  int64_t aRows = c.transA ? c.k : c.m, aCols = c.transA ? c.m : c.k;
  int64_t bRows = c.transB ? c.n : c.k, bCols = c.transB ? c.k : c.n;
  int64_t lda = std::max<int64_t>(aCols, 1) + c.pad;
  int64_t ldb = std::max<int64_t>(bCols, 1) + c.pad;
  int64_t ldc = std::max<int64_t>(c.n, 1) + c.pad;
  int64_t strideA = c.broadcastA ? 0 : aRows * lda + c.gap;
  int64_t strideB = c.broadcastB ? 0 : bRows * ldb + c.gap;
  int64_t strideC = c.m * ldc + c.gap;
  std::vector<uint16_t> a(
      size_t(std::max<int64_t>(c.batch, 1) * (aRows * lda + c.gap))),
      b(size_t(std::max<int64_t>(c.batch, 1) * (bRows * ldb + c.gap)));
  std::vector<float> out(size_t(c.batch * strideC));
  for (uint16_t &x : a)
    x = toBf16(dist(rng));
  for (uint16_t &x : b)
    x = toBf16(dist(rng));
  for (float &x : out)
    x = dist(rng);
  if (!c.accumulate)
    for (int64_t i = 0; i < c.batch; ++i)
      for (int64_t r = 0; r < c.m; ++r)
        std::fill_n(out.begin() + i * strideC + r * ldc, c.n, std::nanf(""));
  std::vector<float> in = out;

  uint64_t callsBefore = zshard_rt_step_sgemm_calls();
  double flopsBefore = zshard_rt_step_sgemm_flops();
  zshard_rt_step_gemm_bf16(c.transA, c.transB, c.batch, c.m, c.n, c.k, a.data(),
                           lda, strideA, b.data(), ldb, strideB, out.data(),
                           ldc, strideC, c.accumulate ? 1 : 0);
  EXPECT_EQ(zshard_rt_step_sgemm_calls(), callsBefore + 1);
  EXPECT_EQ(zshard_rt_step_sgemm_flops() - flopsBefore,
            2.0 * double(c.batch) * double(c.m) * double(c.n) * double(c.k));

  std::vector<bool> written(out.size(), false);
  for (int64_t i = 0; i < c.batch; ++i) {
    const uint16_t *A = a.data() + i * strideA, *B = b.data() + i * strideB;
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t col = 0; col < c.n; ++col) {
        double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          double x = fromBf16(c.transA ? A[p * lda + r] : A[r * lda + p]);
          double y = fromBf16(c.transB ? B[col * ldb + p] : B[p * ldb + col]);
          sum += x * y;
          magnitude += std::fabs(x * y);
        }
        size_t at = size_t(i * strideC + r * ldc + col);
        written[at] = true;
        double before = c.accumulate ? double(in[at]) : 0.0;
        double expected = before + sum;
        ASSERT_NEAR(out[at], expected,
                    1e-5 * (magnitude + std::fabs(before)) + 1e-30)
            << "matrix " << i << " element (" << r << ", " << col << ")";
      }
  }
  for (size_t at = 0; at < out.size(); ++at) {
    if (!written[at]) {
      ASSERT_EQ(out[at], in[at]) << "padding or gap element " << at;
    }
  }
}

TEST(StepGemmBf16, AllTransposesAgainstNaiveLoops) {
  unsigned seed = 1;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      checkAgainstNaive({1, 5, 7, 3, ta, tb, 0, 0}, seed++);
      checkAgainstNaive({3, 17, 9, 33, ta, tb, 0, 0}, seed++);
      checkAgainstNaive({4, 8, 16, 64, ta, tb, 3, 5}, seed++);
      checkAgainstNaive({2, 1, 13, 6, ta, tb, 1, 2}, seed++);
      checkAgainstNaive({2, 13, 1, 6, ta, tb, 0, 7}, seed++);
    }
}

// Tests the products that overwrite C (the compiler's folded zero-fills):
// C's old contents, NaN here, are never read, on oneDNN and on the widened
// path alike; an empty k zeroes C.
TEST(StepGemmBf16, OverwritingProductsIgnoreC) {
  unsigned seed = 301;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Case c{1, 5, 7, 3, ta, tb, 0, 0};
      c.accumulate = false;
      checkAgainstNaive(c, seed++);
      c = {3, 17, 9, 33, ta, tb, 1, 2};
      c.accumulate = false;
      checkAgainstNaive(c, seed++);
    }
  std::vector<float> c = {std::nanf(""), std::nanf(""), std::nanf(""),
                          std::nanf("")};
  zshard_rt_step_gemm_bf16(0, 0, 1, 2, 2, 0, nullptr, 0, 0, nullptr, 0, 0,
                           c.data(), 2, 0, 0);
  EXPECT_EQ(c, std::vector<float>(4, 0.0f));
}

TEST(StepGemmBf16, AttentionSizedBatches) {
  // Per-head products of a small attention: [B*H, T, D] x [B*H, D, T].
  checkAgainstNaive({8, 32, 32, 16, false, true, 0, 0}, 101);
  checkAgainstNaive({8, 32, 16, 32, false, false, 0, 0}, 102);
  checkAgainstNaive({6, 64, 48, 40, true, false, 2, 1}, 103);
}

TEST(StepGemmBf16, BroadcastOperands) {
  Case c{5, 6, 4, 9, false, false, 1, 0};
  c.broadcastB = true; // one weight for every matrix of the batch
  checkAgainstNaive(c, 201);
  c = {4, 3, 8, 5, true, true, 0, 3};
  c.broadcastA = true;
  checkAgainstNaive(c, 202);
}

TEST(StepGemmBf16, ExactSmallProducts) {
  // Values with few mantissa bits: every product and sum is exact in f32.
  // A = [[1, 2], [3, 4]] (2x2), B = [[0.5, -1], [2, 0.25]], C starts at 1.
  std::vector<uint16_t> a = {toBf16(1), toBf16(2), toBf16(3), toBf16(4)};
  std::vector<uint16_t> b = {toBf16(0.5f), toBf16(-1), toBf16(2),
                             toBf16(0.25f)};
  std::vector<float> c(4, 1.0f);
  zshard_rt_step_gemm_bf16(0, 0, 1, 2, 2, 2, a.data(), 2, 0, b.data(), 2, 0,
                           c.data(), 2, 0, 1);
  EXPECT_EQ(c, (std::vector<float>{1 + 4.5f, 1 - 0.5f, 1 + 9.5f, 1 - 2.0f}));
  // A^T B^T: A^T = [[1, 3], [2, 4]], B^T = [[0.5, 2], [-1, 0.25]].
  std::fill(c.begin(), c.end(), 0.0f);
  zshard_rt_step_gemm_bf16(1, 1, 1, 2, 2, 2, a.data(), 2, 0, b.data(), 2, 0,
                           c.data(), 2, 0, 1);
  EXPECT_EQ(c, (std::vector<float>{0.5f - 3, 2 + 0.75f, 1 - 4, 4 + 1}));
}

TEST(StepGemmBf16, EmptyProductsLeaveCAlone) {
  std::vector<float> c(4, 7.0f);
  zshard_rt_step_gemm_bf16(0, 0, 1, 2, 2, 0, nullptr, 1, 0, nullptr, 2, 0,
                           c.data(), 2, 0, 1);
  zshard_rt_step_gemm_bf16(0, 0, 0, 2, 2, 2, nullptr, 2, 0, nullptr, 2, 0,
                           nullptr, 2, 0, 1);
  EXPECT_EQ(c, std::vector<float>(4, 7.0f));
}

TEST(StepGemmBf16, ScratchIsChargedToOtherForTheCall) {
  zshard_rt_mem_ctx *ctx = nullptr;
  ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  zshard_rt_set_current_mem_ctx(ctx);
  std::vector<uint16_t> a(6 * 4, toBf16(1)), b(4 * 5, toBf16(1));
  std::vector<float> c(6 * 5, 0.0f);
  zshard_rt_step_gemm_bf16(0, 0, 1, 6, 5, 4, a.data(), 4, 0, b.data(), 5, 0,
                           c.data(), 5, 0, 1);
  zshard_rt_set_current_mem_ctx(nullptr);
  EXPECT_EQ(c, std::vector<float>(30, 4.0f));
  uint64_t live = 1, peak = 0;
  ASSERT_EQ(zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_OTHER, &live),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_mem_peak_bytes(ctx, ZSHARD_RT_MEM_OTHER, &peak),
            ZSHARD_RT_OK);
  EXPECT_EQ(live, 0u);
  // oneDNN's scratch (its size oneDNN's choice), else both panels widened.
  if (!zshard_rt_cpu_native_bf16_gemm()) {
    EXPECT_EQ(peak, (6u * 4 + 4 * 5) * sizeof(float));
  }
  zshard_rt_mem_ctx_destroy(ctx);
}

/// Whether /proc/cpuinfo lists an instruction set that multiplies bf16.
bool cpuMultipliesBf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0)
      return line.find(" avx512_bf16") != std::string::npos ||
             line.find(" amx_bf16") != std::string::npos;
  return false;
}

TEST(StepGemmBf16, NativeExactlyWhereTheCpuMultipliesBf16) {
#ifdef ZSHARD_HAS_DNNL
  EXPECT_EQ(zshard_rt_cpu_native_bf16_gemm(), cpuMultipliesBf16() ? 1 : 0);
#else
  (void)cpuMultipliesBf16;
  EXPECT_EQ(zshard_rt_cpu_native_bf16_gemm(), 0); // built without oneDNN
#endif
}

TEST(StepGemmBf16, CountersAreSharedWithSgemm) {
  zshard_rt_step_sgemm_reset_counters();
  std::vector<uint16_t> a(4, toBf16(1)), b(4, toBf16(1));
  std::vector<float> c(4, 0.0f), af(4, 1.0f), bf(4, 1.0f);
  zshard_rt_step_gemm_bf16(0, 0, 1, 2, 2, 2, a.data(), 2, 0, b.data(), 2, 0,
                           c.data(), 2, 0, 1);
  zshard_rt_step_sgemm(0, 0, 1, 2, 2, 2, af.data(), 2, 0, bf.data(), 2, 0,
                       c.data(), 2, 0, 1);
  EXPECT_EQ(zshard_rt_step_sgemm_calls(), 2u);
  EXPECT_EQ(zshard_rt_step_sgemm_flops(), 32.0);
  EXPECT_EQ(c, std::vector<float>(4, 4.0f));
}

using StepGemmBf16Death = ::testing::Test;

TEST(StepGemmBf16Death, BadLeadingDimensionAborts) {
  std::vector<uint16_t> a(6), b(6);
  std::vector<float> c(4);
  EXPECT_DEATH(zshard_rt_step_gemm_bf16(0, 0, 1, 2, 2, 3, a.data(), 2, 0,
                                        b.data(), 2, 0, c.data(), 2, 0, 1),
               "zshard runtime: fatal: zshard_rt_step_gemm_bf16: lda = 2 for "
               "a 2 x 3 matrix");
  EXPECT_DEATH(zshard_rt_step_gemm_bf16(0, 0, 1, 2, 2, 3, nullptr, 3, 0,
                                        b.data(), 2, 0, c.data(), 2, 0, 1),
               "zshard_rt_step_gemm_bf16: a is NULL");
  EXPECT_DEATH(zshard_rt_step_gemm_bf16(0, 0, -1, 2, 2, 3, a.data(), 3, 0,
                                        b.data(), 2, 0, c.data(), 2, 0, 1),
               "zshard_rt_step_gemm_bf16: batch, m, n, k = -1, 2, 2, 3");
}

} // namespace
