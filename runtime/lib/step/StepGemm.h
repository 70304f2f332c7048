//===- StepGemm.h - What the step matrix products share ---------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// zshard_rt_step_sgemm and zshard_rt_step_gemm_bf16 check their arguments
/// the same way and add to the same per-thread counters
/// (zshard_rt_step_sgemm_seconds, _flops, _calls), whichever device runs
/// them.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_STEPGEMM_H
#define ZSHARD_RUNTIME_LIB_STEP_STEPGEMM_H

#include <cstdint>

namespace zshard::rt {

/// Per-thread totals of the step matrix products.
struct StepGemmCounters {
  double seconds = 0;
  double flops = 0;
  uint64_t calls = 0;
  /// The f32 calls that oneDNN ran (cpu/DnnlGemm.h).
  uint64_t dnnlCalls = 0;
};

/// The calling thread's counters.
StepGemmCounters &stepGemmCounters();

/// A matrix zshard_rt_step_sgemm_bias_add() adds to each product after its
/// bias: D_i at data + i * stride (elements), rows ld apart.
struct GemmAddend {
  const float *data;
  int64_t ld, stride;
};

/// A batched row-major product C_i (+)= op(A_i) op(B_i) after its checks:
/// the leading dimensions as the BLAS takes them (a single row's stride
/// replaced by the smallest valid one).
struct StepGemmShape {
  bool transA, transB;
  int64_t batch, m, n, k;
  int lda, ldb, ldc;
  /// C_i += op(A_i) op(B_i) (BLAS's beta 1); else C_i = op(A_i) op(B_i)
  /// (beta 0: C_i's old contents are never read).
  bool accumulate = true;
  /// Whether there is nothing to do (C stays as it is).
  bool empty() const {
    return batch == 0 || m == 0 || n == 0 || (k == 0 && accumulate);
  }
  /// Whether the product only zeroes C (k is 0 and C is overwritten).
  bool zeroesOnly() const { return !empty() && k == 0; }
  /// BLAS's beta for this product.
  float beta() const { return accumulate ? 1.0f : 0.0f; }
};

/// Checks the dimensions and leading dimensions of a step product for
/// \p entry and returns its shape; aborts (stepFatal) on what would make the
/// BLAS misbehave: negative sizes, m, n, k above INT_MAX, a leading dimension
/// below the row length, NULL operands of a non-empty product.
StepGemmShape checkStepGemm(const char *entry, int32_t transA, int32_t transB,
                            int64_t batch, int64_t m, int64_t n, int64_t k,
                            const void *a, int64_t lda, const void *b,
                            int64_t ldb, const void *c, int64_t ldc,
                            int32_t accumulate);

/// C_i = 0 for each matrix of a host product that only zeroes C
/// (StepGemmShape::zeroesOnly), without reading C.
void zeroStepProducts(const StepGemmShape &shape, float *c, int64_t strideC);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_STEPGEMM_H
