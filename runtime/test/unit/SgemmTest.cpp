//===- SgemmTest.cpp - Tests of the CPU sgemm -----------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

/// One case: shape, transposes, scalars and extra row padding of A, B, C.
struct GemmCase {
  int64_t m, n, k;
  bool transA, transB;
  float alpha, beta;
  int64_t pad;
};

std::string describe(const GemmCase &c) {
  return "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
         " k=" + std::to_string(c.k) + " transA=" + std::to_string(c.transA) +
         " transB=" + std::to_string(c.transB) +
         " alpha=" + std::to_string(c.alpha) +
         " beta=" + std::to_string(c.beta) + " pad=" + std::to_string(c.pad);
}

/// Runs zshard_rt_cpu_sgemm on random data and compares every element with a
/// naive triple loop in double: |got - want| <= 1e-5 * (sum of |terms|), the
/// relative error bound of a length-k dot product in float.
void checkAgainstNaive(const GemmCase &c, unsigned seed) {
  SCOPED_TRACE(describe(c));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);

  // Stored shapes: A is m x k (k x m when transposed), B is k x n (n x k).
  int64_t aRows = c.transA ? c.k : c.m, aCols = c.transA ? c.m : c.k;
  int64_t bRows = c.transB ? c.n : c.k, bCols = c.transB ? c.k : c.n;
  // BLAS wants leading dimensions of at least 1, even for empty rows.
  auto leading = [&](int64_t cols) {
    return std::max<int64_t>(cols, 1) + c.pad;
  };
  int64_t lda = leading(aCols), ldb = leading(bCols), ldc = leading(c.n);
  std::vector<float> a(aRows * lda), b(bRows * ldb), cOut(c.m * ldc);
  for (float &x : a)
    x = dist(rng);
  for (float &x : b)
    x = dist(rng);
  for (float &x : cOut)
    x = dist(rng);
  // Padding must come out untouched.
  const float sentinel = 1234.5f;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = c.n; j < ldc; ++j)
      cOut[i * ldc + j] = sentinel;
  std::vector<float> cIn = cOut;

  ASSERT_EQ(zshard_rt_cpu_sgemm(c.transA ? ZSHARD_RT_TRANS : ZSHARD_RT_NO_TRANS,
                                c.transB ? ZSHARD_RT_TRANS : ZSHARD_RT_NO_TRANS,
                                c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(),
                                ldb, c.beta, cOut.data(), ldc),
            ZSHARD_RT_OK)
      << zshard_rt_last_error_message();

  auto opA = [&](int64_t i, int64_t p) {
    return c.transA ? a[p * lda + i] : a[i * lda + p];
  };
  auto opB = [&](int64_t p, int64_t j) {
    return c.transB ? b[j * ldb + p] : b[p * ldb + j];
  };
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        double term = double(opA(i, p)) * double(opB(p, j));
        sum += term;
        magnitude += std::fabs(term);
      }
      double want = double(c.alpha) * sum + double(c.beta) * cIn[i * ldc + j];
      double scale = std::fabs(c.alpha) * magnitude +
                     std::fabs(c.beta) * std::fabs(cIn[i * ldc + j]);
      double got = cOut[i * ldc + j];
      ASSERT_LE(std::fabs(got - want), 1e-5 * scale + 1e-30)
          << "at (" << i << ", " << j << "): got " << got << ", want " << want;
    }
    for (int64_t j = c.n; j < ldc; ++j)
      ASSERT_EQ(cOut[i * ldc + j], sentinel) << "padding written at " << j;
  }
}

} // namespace

// Tests all four transpose combinations over odd and degenerate shapes, with
// and without padded leading dimensions, against a naive triple loop.
TEST(SgemmTest, MatchesNaiveForAllTransposes) {
  const int64_t shapes[][3] = {{1, 1, 1},    {3, 5, 7},    {7, 3, 5},
                               {17, 13, 19}, {33, 1, 65},  {1, 31, 9},
                               {65, 67, 3},  {129, 63, 97}};
  unsigned seed = 1;
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (const auto &shape : shapes)
        for (int64_t pad : {0, 3})
          checkAgainstNaive(
              {shape[0], shape[1], shape[2], transA, transB, 1.25f, -0.5f, pad},
              seed++);
}

// Tests the scalar special cases: alpha = 1 and beta = 1, alpha = 0 (C only
// scaled), and k = 0.
TEST(SgemmTest, ScalarsAndEmptyInnerDimension) {
  checkAgainstNaive({9, 11, 13, false, true, 1.0f, 1.0f, 0}, 7);
  checkAgainstNaive({9, 11, 13, true, false, 0.0f, 2.0f, 1}, 8);
  checkAgainstNaive({5, 6, 0, false, false, 1.0f, 3.0f, 0}, 9);
}

// Tests that beta = 0 never reads C: NaNs there must not reach the result.
TEST(SgemmTest, BetaZeroIgnoresC) {
  for (int64_t k : {0, 4}) {
    const int64_t m = 3, n = 5;
    std::vector<float> a(m * 4, 1.0f), b(4 * n, 0.5f);
    std::vector<float> c(m * n, std::numeric_limits<float>::quiet_NaN());
    ASSERT_EQ(zshard_rt_cpu_sgemm(ZSHARD_RT_NO_TRANS, ZSHARD_RT_NO_TRANS, m, n,
                                  k, 1.0f, a.data(), k > 0 ? k : 1, b.data(), n,
                                  0.0f, c.data(), n),
              ZSHARD_RT_OK);
    for (float x : c)
      EXPECT_EQ(x, 0.5f * k) << "k=" << k;
  }
}

// Tests that empty results are fine and bad arguments are rejected.
TEST(SgemmTest, InvalidArguments) {
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0, 0, 0, 0};
  EXPECT_EQ(zshard_rt_cpu_sgemm(ZSHARD_RT_NO_TRANS, ZSHARD_RT_NO_TRANS, 0, 2, 2,
                                1.0f, nullptr, 2, nullptr, 2, 0.0f, nullptr, 2),
            ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_cpu_sgemm(ZSHARD_RT_NO_TRANS, ZSHARD_RT_NO_TRANS, -1, 2,
                                2, 1.0f, a, 2, b, 2, 0.0f, c, 2),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_cpu_sgemm(ZSHARD_RT_NO_TRANS, ZSHARD_RT_NO_TRANS, 2, 2, 2,
                                1.0f, a, 1, b, 2, 0.0f, c, 2),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(zshard_rt_last_error_message(), "lda"), nullptr);
  EXPECT_EQ(zshard_rt_cpu_sgemm(ZSHARD_RT_NO_TRANS, ZSHARD_RT_TRANS, 2, 3, 2,
                                1.0f, a, 2, b, 1, 0.0f, c, 3),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_cpu_sgemm(ZSHARD_RT_NO_TRANS, ZSHARD_RT_NO_TRANS, 2, 2, 2,
                                1.0f, a, 2, b, 2, 0.0f, c, 1),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_cpu_sgemm(static_cast<zshard_rt_transpose>(2),
                                ZSHARD_RT_NO_TRANS, 2, 2, 2, 1.0f, a, 2, b, 2,
                                0.0f, c, 2),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_cpu_sgemm(ZSHARD_RT_NO_TRANS, ZSHARD_RT_NO_TRANS, 2, 2, 2,
                                1.0f, nullptr, 2, b, 2, 0.0f, c, 2),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_cpu_sgemm(ZSHARD_RT_NO_TRANS, ZSHARD_RT_NO_TRANS, 2, 2, 2,
                                1.0f, a, 2, b, 2, 0.0f, c, int64_t(1) << 40),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
}

// Tests that the BLAS in use is named.
TEST(SgemmTest, BlasInfoNamesOpenBlas) {
  EXPECT_EQ(std::strncmp(zshard_rt_cpu_blas_info(), "OpenBLAS", 8), 0)
      << zshard_rt_cpu_blas_info();
}
