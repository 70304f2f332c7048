//===- StepSgemmTest.cpp - Tests of the compiled-step sgemm ---------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

/// One batched case: shape, transposes, padding of the leading dimensions
/// and extra elements between consecutive matrices.
struct BatchCase {
  int64_t batch, m, n, k;
  bool transA, transB;
  int64_t pad, gap;
};

std::string describe(const BatchCase &c) {
  return "batch=" + std::to_string(c.batch) + " m=" + std::to_string(c.m) +
         " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
         " transA=" + std::to_string(c.transA) +
         " transB=" + std::to_string(c.transB) +
         " pad=" + std::to_string(c.pad) + " gap=" + std::to_string(c.gap);
}

/// Runs zshard_rt_step_sgemm on random data and compares with naive loops in
/// double; padding and gaps must come out untouched. Accumulating, C starts
/// random (it must be added to); overwriting, C's matrices start NaN (they
/// must never be read). Returns how many of its calls oneDNN ran (0 or 1).
/// With `withBias`, zshard_rt_step_sgemm_bias instead (accumulate must be
/// false): C_i = op(A_i) op(B_i) + bias, bias random; with `withAddend` too,
/// zshard_rt_step_sgemm_bias_add: C_i = op(A_i) op(B_i) + bias + D_i, D
/// random with its own padding and gaps.
uint64_t checkAgainstNaive(const BatchCase &c, unsigned seed, bool accumulate,
                           bool withBias = false, bool withAddend = false) {
  SCOPED_TRACE(describe(c) + " accumulate=" + std::to_string(accumulate) +
               " bias=" + std::to_string(withBias) +
               " addend=" + std::to_string(withAddend));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int64_t aRows = c.transA ? c.k : c.m, aCols = c.transA ? c.m : c.k;
  int64_t bRows = c.transB ? c.n : c.k, bCols = c.transB ? c.k : c.n;
  int64_t lda = std::max<int64_t>(aCols, 1) + c.pad;
  int64_t ldb = std::max<int64_t>(bCols, 1) + c.pad;
  int64_t ldc = std::max<int64_t>(c.n, 1) + c.pad;
  int64_t strideA = aRows * lda + c.gap, strideB = bRows * ldb + c.gap,
          strideC = c.m * ldc + c.gap;
  std::vector<float> a(c.batch * strideA), b(c.batch * strideB),
      out(c.batch * strideC);
  for (float &x : a)
    x = dist(rng);
  for (float &x : b)
    x = dist(rng);
  for (float &x : out)
    x = dist(rng);
  std::vector<float> bias(std::max<int64_t>(c.n, 1));
  for (float &x : bias)
    x = dist(rng);
  int64_t ldd = std::max<int64_t>(c.n, 1) + c.pad,
          strideD = c.m * ldd + 2 * c.gap;
  std::vector<float> d(std::max<int64_t>(c.batch * strideD, 1));
  for (float &x : d)
    x = dist(rng);
  if (!accumulate)
    for (int64_t i = 0; i < c.batch; ++i)
      for (int64_t r = 0; r < c.m; ++r)
        std::fill_n(out.begin() + i * strideC + r * ldc, c.n, std::nanf(""));
  std::vector<float> in = out;

  uint64_t callsBefore = zshard_rt_step_sgemm_calls();
  uint64_t dnnlBefore = zshard_rt_step_sgemm_dnnl_calls();
  double flopsBefore = zshard_rt_step_sgemm_flops();
  if (withAddend)
    zshard_rt_step_sgemm_bias_add(c.transA, c.transB, c.batch, c.m, c.n, c.k,
                                  a.data(), lda, strideA, b.data(), ldb,
                                  strideB, out.data(), ldc, strideC,
                                  bias.data(), d.data(), ldd, strideD);
  else if (withBias)
    zshard_rt_step_sgemm_bias(c.transA, c.transB, c.batch, c.m, c.n, c.k,
                              a.data(), lda, strideA, b.data(), ldb, strideB,
                              out.data(), ldc, strideC, bias.data());
  else
    zshard_rt_step_sgemm(c.transA, c.transB, c.batch, c.m, c.n, c.k, a.data(),
                         lda, strideA, b.data(), ldb, strideB, out.data(), ldc,
                         strideC, accumulate ? 1 : 0);
  EXPECT_EQ(zshard_rt_step_sgemm_calls(), callsBefore + 1);
  uint64_t dnnlCalls = zshard_rt_step_sgemm_dnnl_calls() - dnnlBefore;
  EXPECT_EQ(zshard_rt_step_sgemm_flops() - flopsBefore,
            2.0 * c.batch * c.m * c.n * c.k);

  std::vector<bool> written(out.size(), false);
  for (int64_t i = 0; i < c.batch; ++i) {
    const float *A = a.data() + i * strideA, *B = b.data() + i * strideB;
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t col = 0; col < c.n; ++col) {
        double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          double x = c.transA ? A[p * lda + r] : A[r * lda + p];
          double y = c.transB ? B[col * ldb + p] : B[p * ldb + col];
          sum += x * y;
          magnitude += std::fabs(x * y);
        }
        size_t at = size_t(i * strideC + r * ldc + col);
        written[at] = true;
        double before = accumulate ? in[at] : withBias ? bias[col] : 0.0;
        if (withAddend)
          before += d[size_t(i * strideD + r * ldd + col)];
        double want = before + sum;
        EXPECT_LE(std::fabs(out[at] - want),
                  1e-5 * (magnitude + std::fabs(before)) + 1e-30)
            << "matrix " << i << " at (" << r << ", " << col << ")";
        if (::testing::Test::HasFailure())
          return dnnlCalls;
      }
  }
  for (size_t at = 0; at < out.size(); ++at) {
    if (!written[at]) {
      EXPECT_EQ(out[at], in[at]) << "padding or gap written at " << at;
      if (::testing::Test::HasFailure())
        return dnnlCalls;
    }
  }
  return dnnlCalls;
}

/// Whether oneDNN has batch-reduce GEMM kernels for this CPU (its
/// avx512_core ISA: AVX-512 F, BW, VL and DQ).
bool cpuHasBrgemm() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
}

} // namespace

// Tests every transpose combination over batched, strided, padded shapes,
// including the small ones of attention heads, against naive loops, both
// accumulating into C and overwriting it.
TEST(StepSgemmTest, MatchesNaiveForAllTransposesAndStrides) {
  const int64_t shapes[][4] = {{1, 1, 1, 1},   {1, 3, 5, 7},    {3, 7, 3, 5},
                               {8, 16, 16, 8}, {2, 1, 31, 9},   {4, 33, 1, 65},
                               {2, 65, 67, 3}, {1, 129, 63, 97}};
  unsigned seed = 1;
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (const auto &s : shapes)
        for (int64_t pad : {0, 2})
          for (int64_t gap : {0, 5})
            for (bool accumulate : {true, false})
              EXPECT_EQ(checkAgainstNaive(
                            {s[0], s[1], s[2], s[3], transA, transB, pad, gap},
                            seed++, accumulate),
                        0u)
                  << "a product below 2^21 multiply-adds went to oneDNN";
}

// Tests products of at least 2^21 multiply-adds a matrix, which go to
// oneDNN's matmul where it has batch-reduce GEMM kernels for the CPU, the
// same way; dense single matrices must take that path there.
TEST(StepSgemmTest, LargeProductsMatchNaive) {
  const int64_t shapes[][4] = {{1, 130, 129, 131}, {2, 97, 160, 140}};
  unsigned seed = 1000;
  uint64_t denseOnDnnl = 0, dense = 0;
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (const auto &s : shapes)
        for (int64_t pad : {0, 3})
          for (int64_t gap : {0, 5})
            for (bool accumulate : {true, false}) {
              uint64_t onDnnl = checkAgainstNaive(
                  {s[0], s[1], s[2], s[3], transA, transB, pad, gap}, seed++,
                  accumulate);
              if (s[0] == 1 && pad == 0 && gap == 0) {
                ++dense;
                denseOnDnnl += onDnnl;
              }
            }
#ifdef ZSHARD_HAS_DNNL
  EXPECT_EQ(denseOnDnnl, cpuHasBrgemm() ? dense : 0u);
#else
  (void)cpuHasBrgemm;
  EXPECT_EQ(denseOnDnnl, 0u); // built without oneDNN
#endif
}

// Tests the products above the threshold that go to OpenBLAS all the same:
// a B that is not transposed with more than 2048 columns or at least 4096
// rows (where oneDNN's matmul is the slower), beside the same shapes with
// B transposed, which go to oneDNN where it has batch-reduce GEMM kernels.
TEST(StepSgemmTest, WideOrDeepUntransposedBGoesToBlas) {
  const int64_t shapes[][4] = {{1, 8, 2304, 120}, {1, 8, 64, 4096}};
  unsigned seed = 3000;
  for (const auto &s : shapes)
    for (bool transA : {false, true}) {
      EXPECT_EQ(checkAgainstNaive({s[0], s[1], s[2], s[3], transA, false, 0, 0},
                                  seed++, false),
                0u)
          << s[1] << " x " << s[2] << " x " << s[3] << " went to oneDNN";
      uint64_t onDnnl = checkAgainstNaive(
          {s[0], s[1], s[2], s[3], transA, true, 0, 0}, seed++, false);
#ifdef ZSHARD_HAS_DNNL
      EXPECT_EQ(onDnnl, cpuHasBrgemm() ? 1u : 0u)
          << s[1] << " x " << s[2] << " x " << s[3] << " with B transposed";
#else
      EXPECT_EQ(onDnnl, 0u);
#endif
    }
}

/// Runs zshard_rt_step_sgemm_bias (with `withAddend`, _bias_add) over
/// shapes below and above oneDNN's threshold and with k 0, in every layout,
/// padded and with gaps, and checks that the dense ones above the threshold
/// ran on oneDNN exactly where it has batch-reduce GEMM kernels.
void checkBiasProducts(unsigned seed, bool withAddend) {
  const int64_t shapes[][4] = {{1, 3, 5, 7},
                               {2, 65, 67, 3},
                               {1, 7, 4, 0},
                               {1, 130, 129, 131},
                               {2, 97, 160, 140}};
  uint64_t denseOnDnnl = 0, dense = 0;
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (const auto &s : shapes)
        for (int64_t pad : {0, 2})
          for (int64_t gap : {0, 5}) {
            uint64_t onDnnl = checkAgainstNaive(
                {s[0], s[1], s[2], s[3], transA, transB, pad, gap}, seed++,
                /*accumulate=*/false, /*withBias=*/true, withAddend);
            if (s[0] * s[1] * s[2] * s[3] < (int64_t(1) << 21))
              EXPECT_EQ(onDnnl, 0u) << "a small product went to oneDNN";
            else if (s[0] == 1 && pad == 0 && gap == 0) {
              ++dense;
              denseOnDnnl += onDnnl;
            }
          }
#ifdef ZSHARD_HAS_DNNL
  EXPECT_EQ(denseOnDnnl, cpuHasBrgemm() ? dense : 0u);
#else
  EXPECT_EQ(denseOnDnnl, 0u); // built without oneDNN
#endif
}

// Tests zshard_rt_step_sgemm_bias (the product plus a row added to every row,
// C never read) the same way, below and above oneDNN's threshold, and with
// k 0 (C is the bias alone).
TEST(StepSgemmTest, BiasProductsMatchNaive) {
  checkBiasProducts(2000, /*withAddend=*/false);
}

// Tests zshard_rt_step_sgemm_bias_add (the product plus the bias plus a
// matrix D with its own leading dimension and batch stride, C never read)
// the same way, on the same path rule.
TEST(StepSgemmTest, BiasAddProductsMatchNaive) {
  checkBiasProducts(3000, /*withAddend=*/true);
}

// Tests that a batch stride of 0 for A or B broadcasts one matrix to all.
TEST(StepSgemmTest, ZeroStrideBroadcasts) {
  const int64_t batch = 3, m = 2, n = 2, k = 2;
  std::vector<float> a = {1, 2, 3, 4}, b = {1, 0, 0, 1};
  std::vector<float> c(batch * m * n, 10.0f);
  zshard_rt_step_sgemm(0, 0, batch, m, n, k, a.data(), k, 0, b.data(), n, 0,
                       c.data(), n, m * n, 1);
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t j = 0; j < m * n; ++j)
      EXPECT_EQ(c[i * m * n + j], 10.0f + a[j]);
}

// Tests that empty products leave C alone and that a single row may carry
// any leading dimension (compiled code passes the stride of a unit dim).
TEST(StepSgemmTest, EmptyProductsAndSingleRows) {
  std::vector<float> a = {1, 2, 3}, b = {4, 5, 6};
  float c = 7.0f;
  zshard_rt_step_sgemm(0, 0, 0, 1, 1, 3, a.data(), 3, 0, b.data(), 1, 0, &c, 1,
                       0, 1);
  zshard_rt_step_sgemm(0, 0, 1, 1, 1, 0, a.data(), 3, 0, b.data(), 1, 0, &c, 1,
                       0, 1);
  EXPECT_EQ(c, 7.0f);
  // 1x3 @ 3x1 with lda = 0 and ldc = 0: one row each.
  zshard_rt_step_sgemm(0, 0, 1, 1, 1, 3, a.data(), 0, 0, b.data(), 1, 0, &c, 0,
                       0, 1);
  EXPECT_EQ(c, 7.0f + 4 + 10 + 18);
}

// Tests that an empty k without accumulating zeroes C (NaN before: never
// read) and reads neither A nor B, leaving C's padding alone.
TEST(StepSgemmTest, EmptyOverwritingProductZeroes) {
  std::vector<float> c = {std::nanf(""), std::nanf(""), 5.0f,
                          std::nanf(""), std::nanf(""), 5.0f};
  zshard_rt_step_sgemm(0, 0, 1, 2, 2, 0, nullptr, 0, 0, nullptr, 0, 0, c.data(),
                       3, 0, 0);
  EXPECT_EQ(c, (std::vector<float>{0, 0, 5, 0, 0, 5}));
}

// Tests that the time counter grows, and that the counters are per thread and
// reset.
TEST(StepSgemmTest, CountersArePerThreadAndReset) {
  zshard_rt_step_sgemm_reset_counters();
  EXPECT_EQ(zshard_rt_step_sgemm_calls(), 0u);
  EXPECT_EQ(zshard_rt_step_sgemm_seconds(), 0.0);
  std::vector<float> a(64 * 64, 1.0f), b(64 * 64, 1.0f), c(64 * 64, 0.0f);
  zshard_rt_step_sgemm(0, 0, 4, 64, 64, 16, a.data(), 64, 0, b.data(), 64, 0,
                       c.data(), 64, 0, 1);
  EXPECT_EQ(zshard_rt_step_sgemm_calls(), 1u);
  EXPECT_EQ(zshard_rt_step_sgemm_flops(), 2.0 * 4 * 64 * 64 * 16);
  EXPECT_GT(zshard_rt_step_sgemm_seconds(), 0.0);
  uint64_t otherCalls = 99;
  std::thread([&] { otherCalls = zshard_rt_step_sgemm_calls(); }).join();
  EXPECT_EQ(otherCalls, 0u);
  zshard_rt_step_sgemm_reset_counters();
  EXPECT_EQ(zshard_rt_step_sgemm_flops(), 0.0);
}

// Tests that a leading dimension that would make rows overlap aborts with a
// message naming the entry, rather than letting the BLAS skip the product.
TEST(StepSgemmDeathTest, BadLeadingDimensionAborts) {
  std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, 0.0f);
  EXPECT_DEATH(zshard_rt_step_sgemm(0, 0, 1, 2, 2, 4, a.data(), 3, 0, b.data(),
                                    2, 0, c.data(), 2, 0, 1),
               "zshard_rt_step_sgemm: lda = 3 for a 2 x 4 matrix");
  EXPECT_DEATH(zshard_rt_step_sgemm(0, 0, -1, 2, 2, 2, a.data(), 2, 0, b.data(),
                                    2, 0, c.data(), 2, 0, 1),
               "must be non-negative");
}

// Tests that a product with a bias checks like the plain one and needs its
// bias.
TEST(StepSgemmDeathTest, BiasProductChecks) {
  std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, 0.0f);
  EXPECT_DEATH(zshard_rt_step_sgemm_bias(0, 0, 1, 2, 2, 2, a.data(), 2, 0,
                                         b.data(), 2, 0, c.data(), 2, 0,
                                         nullptr),
               "zshard_rt_step_sgemm_bias: bias is NULL");
  EXPECT_DEATH(zshard_rt_step_sgemm_bias(0, 0, 1, 2, 2, 4, a.data(), 3, 0,
                                         b.data(), 2, 0, c.data(), 2, 0,
                                         a.data()),
               "zshard_rt_step_sgemm_bias: lda = 3 for a 2 x 4 matrix");
}

// Tests that a product adding D checks D: NULL, a leading dimension below
// the row, D overlapping C.
TEST(StepSgemmDeathTest, BiasAddProductChecks) {
  std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, 0.0f), d(16, 0.0f);
  EXPECT_DEATH(zshard_rt_step_sgemm_bias_add(0, 0, 1, 2, 2, 2, a.data(), 2, 0,
                                             b.data(), 2, 0, c.data(), 2, 0,
                                             a.data(), nullptr, 2, 0),
               "zshard_rt_step_sgemm_bias_add: d is NULL");
  EXPECT_DEATH(zshard_rt_step_sgemm_bias_add(0, 0, 1, 2, 2, 2, a.data(), 2, 0,
                                             b.data(), 2, 0, c.data(), 2, 0,
                                             a.data(), d.data(), 1, 0),
               "zshard_rt_step_sgemm_bias_add: ldd = 1 for a 2 x 2 matrix");
  EXPECT_DEATH(zshard_rt_step_sgemm_bias_add(0, 0, 1, 2, 2, 2, a.data(), 2, 0,
                                             b.data(), 2, 0, c.data(), 2, 0,
                                             a.data(), c.data() + 3, 2, 0),
               "zshard_rt_step_sgemm_bias_add: d overlaps c");
}
