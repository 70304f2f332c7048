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

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_ps() as the unused
// merge operand, which -Wuninitialized reports in the caller.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

/// expApprox on 16 floats at once in AVX-512 registers: the same operations
/// in the same order (no fused multiply-adds), so each lane is bit for bit
/// expApprox of its input, NaN included. Only on a CPU with AVX-512 F.
[[gnu::target("avx512f")]] inline __m512 expApprox16(__m512 x) {
  const __m512 kMin = _mm512_set1_ps(-87.33f), kMax = _mm512_set1_ps(88.0f);
  // std::max(x, kMin) and std::min(., kMax) keep a NaN x; the intrinsics
  // return their second operand when either is NaN.
  __m512 clamped = _mm512_min_ps(kMax, _mm512_max_ps(kMin, x));
  __m512 t = _mm512_add_ps(
      _mm512_mul_ps(clamped, _mm512_set1_ps(1.44269504088896341f)),
      _mm512_set1_ps(0.5f));
  __m512i n = _mm512_cvttps_epi32(t);
  __mmask16 below = _mm512_cmp_ps_mask(t, _mm512_cvtepi32_ps(n), _CMP_LT_OQ);
  n = _mm512_mask_sub_epi32(n, below, n, _mm512_set1_epi32(1));
  __m512 fn = _mm512_cvtepi32_ps(n);
  __m512 r = _mm512_sub_ps(
      _mm512_sub_ps(clamped, _mm512_mul_ps(fn, _mm512_set1_ps(0.693359375f))),
      _mm512_mul_ps(fn, _mm512_set1_ps(-2.12194440e-4f)));
  __m512 r2 = _mm512_mul_ps(r, r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  for (float c : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                  1.6666665459e-1f, 5.0000001201e-1f})
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c));
  __m512 y = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(p, r2), r),
                           _mm512_set1_ps(1.0f));
  __mmask16 underflow = _mm512_cmp_ps_mask(x, kMin, _CMP_LT_OQ);
  __m512i bits =
      _mm512_maskz_slli_epi32(static_cast<__mmask16>(~underflow),
                              _mm512_add_epi32(n, _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(y, _mm512_castsi512_ps(bits));
}

#pragma GCC diagnostic pop
#endif

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CPU_EXPAPPROX_H
