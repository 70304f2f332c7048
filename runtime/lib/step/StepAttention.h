//===- StepAttention.h - the shape of a step's causal attention -*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The shape both zshard_rt_step_attention_* entries check and hand to the
/// device (the CPU kernels of cpu/FlashAttention.cpp or the CUDA kernels of
/// cuda/FlashAttention.cu). q, out, dout, dq: [batch, heads, seq, headDim];
/// k, v, dk, dv: [batch, kvHeads, seq, headDim]; lse: [batch, heads, seq];
/// all f32, contiguous, row-major.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_STEPATTENTION_H
#define ZSHARD_RUNTIME_LIB_STEP_STEPATTENTION_H

#include <cstdint>

namespace zshard::rt {

struct StepAttentionShape {
  int64_t batch, heads, kvHeads, seq, headDim;
  float scale;
  /// Heads per kv head: head h reads kv head h / group().
  int64_t group() const { return heads / kvHeads; }
  bool empty() const { return batch == 0 || seq == 0 || headDim == 0; }
};

/// Causal attention on the host: tiled, online softmax (flash attention's
/// forward), no [seq, seq] buffer; scratch is O(tile * (tile + headDim)).
void cpuAttentionForward(const StepAttentionShape &s, const float *q,
                         const float *k, const float *v, float *out,
                         float *lse);

/// Its backward on the host: scores recomputed tile by tile from q, k and
/// lse; dk and dv sum over the heads of each kv head.
void cpuAttentionBackward(const StepAttentionShape &s, const float *q,
                          const float *k, const float *v, const float *out,
                          const float *lse, const float *dout, float *dq,
                          float *dk, float *dv);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_STEPATTENTION_H
