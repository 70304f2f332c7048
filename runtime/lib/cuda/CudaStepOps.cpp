//===- CudaStepOps.cpp - The compiled step's entries on a CUDA device -----===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// While a CudaDevice is a thread's current device, the compiled step's
// temporaries (the MLIR allocation hooks) come from its pool and its
// products run through cuBLAS on the compute stream. Like the other step
// entries they end the process with one line when they cannot go on.
//
// cuBLAS is column-major and the step's matrices are row-major. A row-major
// m x n matrix with row stride ld is, read column-major, its n x m
// transpose with leading dimension ld. So row-major C = op(A) op(B) is
// column-major C^T = op(B)^T op(A)^T: the same call with the operands
// swapped (B first), m and n swapped, and each operand's transpose flag as
// the step gave it. alpha = beta = 1: C accumulates, as a linalg matmul does.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "cuda/FlashAttention.h"

#include "step/Fatal.h"

#include <climits>

using namespace zshard::rt;

namespace {

const char *blasText(cublasStatus_t status) {
  return cublasGetStatusString(status);
}

cublasOperation_t opOf(bool transposed) {
  return transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/// cuBLAS takes the batch as an int: larger batches go in pieces.
constexpr int64_t maxBatchPerCall = INT_MAX;

} // namespace

cublasHandle_t CudaDevice::blas() {
  if (blasHandle)
    return blasHandle;
  cublasStatus_t status = cublasCreate(&blasHandle);
  if (status != CUBLAS_STATUS_SUCCESS)
    stepFatal("zshard_rt_step_sgemm", "%s: cublasCreate failed: %s",
              deviceName.c_str(), blasText(status));
  status = cublasSetStream(blasHandle, compute);
  if (status != CUBLAS_STATUS_SUCCESS)
    stepFatal("zshard_rt_step_sgemm", "%s: cublasSetStream failed: %s",
              deviceName.c_str(), blasText(status));
  return blasHandle;
}

void *CudaDevice::stepAllocate(zshard_rt_mem_ctx *ctx,
                               zshard_rt_mem_category category, uint64_t bytes,
                               uint64_t alignment) {
  try {
    return devicePool->allocate(ctx, category, bytes, alignment);
  } catch (const Failure &failure) {
    stepFatal("_mlir_memref_to_llvm_alloc", "%s", failure.what());
  }
}

bool CudaDevice::stepFree(void *ptr) {
  return devicePool->free(ptr) || freeHost(ptr);
}

void CudaDevice::stepSgemm(const StepGemmShape &s, const float *a,
                           int64_t strideA, const float *b, int64_t strideB,
                           float *c, int64_t strideC) {
  stepGemm("zshard_rt_step_sgemm", s, a, strideA, b, strideB, CUDA_R_32F,
           sizeof(float), c, strideC);
}

void CudaDevice::stepGemmBf16(const StepGemmShape &s, const uint16_t *a,
                              int64_t strideA, const uint16_t *b,
                              int64_t strideB, float *c, int64_t strideC) {
  stepGemm("zshard_rt_step_gemm_bf16", s, a, strideA, b, strideB, CUDA_R_16BF,
           sizeof(uint16_t), c, strideC);
}

void CudaDevice::stepGemm(const char *entry, const StepGemmShape &s,
                          const void *a, int64_t strideA, const void *b,
                          int64_t strideB, cudaDataType inputType,
                          size_t inputBytes, float *c, int64_t strideC) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the
  // operands swap. f32 inputs with CUBLAS_COMPUTE_32F are plain SGEMM (no
  // TF32); bf16 inputs accumulate in f32. Beta 0 overwrites C without
  // reading it (and with k = 0 only zeroes it).
  const float one = 1.0f, beta = s.beta();
  if (s.zeroesOnly()) {
    for (int64_t i = 0; i < s.batch; ++i)
      if (cudaError_t error = cudaMemset2DAsync(
              c + i * strideC, size_t(s.ldc) * sizeof(float), 0,
              size_t(s.n) * sizeof(float), size_t(s.m), computeStream()))
        stepFatal(entry, "%s: zeroing C failed: %s", deviceName.c_str(),
                  cudaGetErrorString(error));
    return;
  }
  cublasHandle_t handle = blas();
  const char *bytesA = static_cast<const char *>(a);
  const char *bytesB = static_cast<const char *>(b);
  for (int64_t first = 0; first < s.batch; first += maxBatchPerCall) {
    int count = int(s.batch - first < maxBatchPerCall ? s.batch - first
                                                      : maxBatchPerCall);
    cublasStatus_t status = cublasGemmStridedBatchedEx(
        handle, opOf(s.transB), opOf(s.transA), int(s.n), int(s.m), int(s.k),
        &one, bytesB + first * strideB * int64_t(inputBytes), inputType, s.ldb,
        strideB, bytesA + first * strideA * int64_t(inputBytes), inputType,
        s.lda, strideA, &beta, c + first * strideC, CUDA_R_32F, s.ldc, strideC,
        count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (status != CUBLAS_STATUS_SUCCESS)
      stepFatal(entry, "%s: cublasGemmStridedBatchedEx failed: %s",
                deviceName.c_str(), blasText(status));
  }
}

void CudaDevice::stepAttentionForward(const StepAttentionShape &s,
                                      const float *q, const float *k,
                                      const float *v, float *out, float *lse) {
  if (cudaError_t error =
          launchAttentionForward(computeStream(), s, q, k, v, out, lse))
    stepFatal("zshard_rt_step_attention_fwd",
              "%s: the attention kernel (head size %lld, at most %lld) did "
              "not launch: %s",
              deviceName.c_str(), static_cast<long long>(s.headDim),
              static_cast<long long>(kCudaAttentionMaxHeadDim),
              cudaGetErrorString(error));
}

void CudaDevice::stepAttentionBackward(const StepAttentionShape &s,
                                       const float *q, const float *k,
                                       const float *v, const float *out,
                                       const float *lse, const float *dout,
                                       float *dq, float *dk, float *dv) {
  if (cudaError_t error = launchAttentionBackward(computeStream(), s, q, k, v,
                                                  out, lse, dout, dq, dk, dv))
    stepFatal("zshard_rt_step_attention_bwd",
              "%s: the attention kernels (head size %lld, at most %lld) did "
              "not launch: %s",
              deviceName.c_str(), static_cast<long long>(s.headDim),
              static_cast<long long>(kCudaAttentionMaxHeadDim),
              cudaGetErrorString(error));
}
