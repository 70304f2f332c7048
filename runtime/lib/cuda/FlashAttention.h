//===- FlashAttention.h - tiled causal attention kernels on CUDA -*- C++
//-*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Launchers of the CUDA kernels behind zshard_rt_step_attention_fwd / _bwd
/// on a CUDA step device (cuda/FlashAttention.cu). Buffers are device
/// memory in the layouts of step/StepAttention.h. They return the launch's
/// error (cudaSuccess when all kernels were queued on \p stream).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CUDA_FLASHATTENTION_H
#define ZSHARD_RUNTIME_LIB_CUDA_FLASHATTENTION_H

#include "step/StepAttention.h"

#include <cuda_runtime.h>

namespace zshard::rt {

/// The largest head size the kernels take (per-thread rows in registers).
constexpr int64_t kCudaAttentionMaxHeadDim = 256;

cudaError_t launchAttentionForward(cudaStream_t stream,
                                   const StepAttentionShape &s, const float *q,
                                   const float *k, const float *v, float *out,
                                   float *lse);

cudaError_t launchAttentionBackward(cudaStream_t stream,
                                    const StepAttentionShape &s, const float *q,
                                    const float *k, const float *v,
                                    const float *out, const float *lse,
                                    const float *dout, float *dq, float *dk,
                                    float *dv);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CUDA_FLASHATTENTION_H
