//===- DnnlGemm.h - Step products on oneDNN's matmul ------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The host products of zshard_rt_step_sgemm and zshard_rt_step_gemm_bf16
/// through oneDNN's matmul primitive, where oneDNN has a kernel for the CPU
/// that is faster than the fallback:
///
/// - bf16 operands where the CPU multiplies bf16 itself (AVX512-BF16 or AMX:
///   oneDNN's avx512_core_bf16 ISA and above), about twice OpenBLAS's sgemm
///   on the widened panels; elsewhere the caller widens and calls sgemm.
/// - f32 operands where oneDNN's batch-reduce GEMM ("brg") kernels run (the
///   avx512_core ISA and above) and the product is large enough
///   (kDnnlSgemmMinMacs) for the primitive's per-call cost to vanish: 5-15%
///   above OpenBLAS 0.3.21 on the shapes of a transformer step. Elsewhere,
///   and for small products (the 64 x 64 tiles of the attention kernels),
///   OpenBLAS.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CPU_DNNLGEMM_H
#define ZSHARD_RUNTIME_LIB_CPU_DNNLGEMM_H

#include "step/StepGemm.h"

#include <cstdint>

namespace zshard::rt {

/// The least m * n * k of an f32 product that goes to oneDNN.
constexpr int64_t kDnnlSgemmMinMacs = int64_t(1) << 21;

/// An f32 product whose B is not transposed goes to OpenBLAS when B has
/// more columns than this or at least kDnnlSgemmMaxPlainBDepth rows: there
/// oneDNN 2.6's matmul runs below OpenBLAS 0.3.21 on an AVX-512 Xeon (one
/// thread; 256 x 3072 x 768: 52 against 137 GFLOP/s, 768 x 3072 x 256
/// transposed A: 68 against 142, 256 x 768 x 50257: 100 against 125; any
/// N from 2560 to 12288 at 1.2-2.6x), where with a transposed B, or a
/// narrower and shallower one, it is level or ahead (docs/runtime.md).
constexpr int64_t kDnnlSgemmMaxPlainBColumns = 2048;
constexpr int64_t kDnnlSgemmMaxPlainBDepth = 4096;

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

/// The same product of f32 operands, plus `bias` (n values added to every
/// row of every C_i, in the product's epilogue) when not null, then plus
/// `addend` (a binary post-op) when not null; `s` then overwrites C. False,
/// having done nothing, when the product is below kDnnlSgemmMinMacs, has a
/// B that is not transposed and wide or deep (kDnnlSgemmMaxPlainBColumns,
/// kDnnlSgemmMaxPlainBDepth), or oneDNN has no batch-reduce GEMM kernel for
/// this CPU and layout (the caller then calls sgemm).
bool dnnlSgemm(const StepGemmShape &s, const float *a, int64_t strideA,
               const float *b, int64_t strideB, float *c, int64_t strideC,
               const float *bias = nullptr, const GemmAddend *addend = nullptr);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CPU_DNNLGEMM_H
