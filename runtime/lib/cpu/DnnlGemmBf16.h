//===- DnnlGemmBf16.h - bf16 products on oneDNN -----------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// zshard_rt_step_gemm_bf16 on the host through oneDNN's matmul, where the
/// CPU multiplies bf16 itself (AVX512-BF16 or AMX: oneDNN's
/// avx512_core_bf16 ISA and above), about twice OpenBLAS's sgemm on the
/// widened panels. Elsewhere the caller widens and calls sgemm.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CPU_DNNLGEMMBF16_H
#define ZSHARD_RUNTIME_LIB_CPU_DNNLGEMMBF16_H

#include "step/StepGemm.h"

#include <cstdint>

namespace zshard::rt {

/// Whether this runtime has oneDNN and the CPU multiplies bf16 natively
/// (decided once).
bool hasNativeBf16Gemm();

/// C_i (+)= op(A_i) op(B_i) (StepGemmShape::accumulate) for the batch of `s`,
/// with as many threads as OpenBLAS is given; needs hasNativeBf16Gemm(). False,
/// having done nothing, when oneDNN has only its reference kernel for this
/// layout (the caller then widens for sgemm).
bool dnnlGemmBf16(const StepGemmShape &s, const uint16_t *a, int64_t strideA,
                  const uint16_t *b, int64_t strideB, float *c,
                  int64_t strideC);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CPU_DNNLGEMMBF16_H
