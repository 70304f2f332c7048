//===- ExpApproxTest.cpp - Tests of the attention's exponential -----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "cpu/ExpApprox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

/// The position of `f` on the line of floats (adjacent floats differ by 1).
int64_t ordinal(float f) {
  int32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits < 0 ? -int64_t(bits & 0x7fffffff) : int64_t(bits);
}

} // namespace

// Tests expApprox against the correctly rounded e^x over its whole range,
// every 97th float (about 11 million inputs): at most 2 ulp apart.
TEST(ExpApproxTest, WithinTwoUlpOverItsRange) {
  int64_t worst = 0;
  float worstAt = 0;
  int64_t checked = 0;
  for (int64_t i = ordinal(-87.33f); i <= ordinal(88.0f); i += 97) {
    int32_t bits = i < 0 ? int32_t(-i) | int32_t(0x80000000) : int32_t(i);
    float x;
    std::memcpy(&x, &bits, sizeof(x));
    if (x < -87.33f || x > 88.0f)
      continue;
    float want = float(std::exp(double(x)));
    int64_t ulp = std::llabs(ordinal(zshard::rt::expApprox(x)) - ordinal(want));
    if (ulp > worst) {
      worst = ulp;
      worstAt = x;
    }
    ++checked;
  }
  EXPECT_GT(checked, 10000000);
  EXPECT_LE(worst, 2) << "at x = " << worstAt;
}

// Tests the ends: exact at 0, 0 below the range (where e^x is denormal),
// inputs above the range taken as its end, and the scores' typical inputs
// (x - max <= 0) never above 1.
TEST(ExpApproxTest, Ends) {
  EXPECT_EQ(zshard::rt::expApprox(0.0f), 1.0f);
  EXPECT_EQ(zshard::rt::expApprox(-87.34f), 0.0f);
  EXPECT_EQ(zshard::rt::expApprox(-1000.0f), 0.0f);
  EXPECT_EQ(zshard::rt::expApprox(-INFINITY), 0.0f);
  EXPECT_EQ(zshard::rt::expApprox(100.0f), zshard::rt::expApprox(88.0f));
  EXPECT_TRUE(std::isfinite(zshard::rt::expApprox(88.0f)));
  EXPECT_LE(zshard::rt::expApprox(-0.0f), 1.0f);
}

#if defined(__x86_64__)
namespace {

/// out[l] = expApprox16(x)[l] for the 16 lanes.
[[gnu::target("avx512f")]] void expApprox16Into(const float *x, float *out) {
  _mm512_storeu_ps(out, zshard::rt::expApprox16(_mm512_loadu_ps(x)));
}

} // namespace

// Tests that expApprox16 (the attention kernels' AVX-512 row loops) is bit
// for bit expApprox in every lane, over every 31st float of [-100, 100]
// (the clamped ends included), -inf and NaN, on a CPU with AVX-512 F.
TEST(ExpApproxTest, SixteenLanesMatchOne) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "no AVX-512 F";
  auto check = [](const float *x) {
    float lanes[16];
    expApprox16Into(x, lanes);
    for (int l = 0; l < 16; ++l) {
      float one = zshard::rt::expApprox(x[l]);
      EXPECT_EQ(std::memcmp(&lanes[l], &one, sizeof(one)), 0)
          << "at x = " << x[l] << ": " << lanes[l] << " against " << one;
    }
  };
  float x[16];
  int filled = 0;
  int64_t checked = 0;
  for (int64_t i = ordinal(-100.0f); i <= ordinal(100.0f); i += 31) {
    int32_t bits = i < 0 ? int32_t(-i) | int32_t(0x80000000) : int32_t(i);
    std::memcpy(&x[filled++], &bits, sizeof(float));
    if (filled == 16) {
      check(x);
      filled = 0;
      checked += 16;
      if (::testing::Test::HasFailure())
        return;
    }
  }
  EXPECT_GT(checked, 1000000);
  float ends[16] = {-INFINITY, NAN,    -87.33f, 88.0f,   -0.0f,  0.0f,
                    1e-30f,    -1e30f, 1e30f,   -87.34f, 87.99f, 1.0f,
                    -1.0f,     0.5f,   -0.5f,   2.0f};
  check(ends);
}
#endif
