//===- ExpApprox.h - a vectorisable single-precision exp --------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The exponential the CPU attention kernels use in their row loops
/// (FlashAttention.cpp): written without branches around floating-point
/// arithmetic, so that GCC vectorises the loops that call it (with
/// -fno-trapping-math). Tested against double exp in
/// runtime/test/unit/ExpApproxTest.cpp.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CPU_EXPAPPROX_H
#define ZSHARD_RUNTIME_LIB_CPU_EXPAPPROX_H

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace zshard::rt {

/// e^x, branch-free so that loops over it vectorise: Cephes' expf (range
/// reduction by ln 2 in two parts, a degree-6 polynomial, the power of two
/// built in the exponent bits), within 2 ulp of the correctly rounded e^x
/// for x in [-87.33, 88] with or without fused multiply-adds; 0 below
/// (where expf's results are denormal: at most 1.2e-38 apart). Inputs above
/// 88 are taken as 88.
inline float expApprox(float x) {
  constexpr float kMin = -87.33f, kMax = 88.0f;
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  float clamped = std::min(std::max(x, kMin), kMax);
  float t = clamped * kLog2e + 0.5f;
  int32_t n = static_cast<int32_t>(t);
  n -= t < static_cast<float>(n) ? 1 : 0; // floor for negative t
  float fn = static_cast<float>(n);
  float r = clamped - fn * kLn2Hi - fn * kLn2Lo;
  float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r2 + r + 1.0f;
  // 2^n, or 0 (all bits clear) below the range: an integer select keeps
  // the loop free of branches around floating-point arithmetic.
  int32_t bits = x < kMin ? 0 : (n + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return y * scale;
}

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CPU_EXPAPPROX_H
