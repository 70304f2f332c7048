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
/// k, v, dk, dv: [batch, kvHeads, seq, headDim], each with its own strides
/// (AttentionStrides: a head's rows of headDim contiguous f32); lse:
/// [batch, heads, seq], f32, contiguous.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_STEPATTENTION_H
#define ZSHARD_RUNTIME_LIB_STEP_STEPATTENTION_H

#include <cstdint>

// The CUDA kernels index with AttentionStrides too.
#ifdef __CUDACC__
#define ZSHARD_ATTENTION_HOST_DEVICE __host__ __device__
#else
#define ZSHARD_ATTENTION_HOST_DEVICE
#endif

namespace zshard::rt {

/// Where element (b, h, t, e) of an attention operand lies: at
/// b * batch + h * head + t * seq + e elements from its start.
struct AttentionStrides {
  int64_t batch, head, seq;
  /// The offset of row t of head h of batch b.
  ZSHARD_ATTENTION_HOST_DEVICE int64_t row(int64_t b, int64_t h,
                                           int64_t t) const {
    return b * batch + h * head + t * seq;
  }
};

/// The contiguous [batch, heads, seq, headDim] layout.
inline AttentionStrides denseAttentionStrides(int64_t heads, int64_t seq,
                                              int64_t headDim) {
  return {heads * seq * headDim, seq * headDim, headDim};
}

struct StepAttentionShape {
  int64_t batch, heads, kvHeads, seq, headDim;
  float scale;
  /// The operands' layouts (the backward's only for dout, dq, dk, dv).
  AttentionStrides q, k, v, out, dout, dq, dk, dv;
  /// Heads per kv head: head h reads kv head h / group().
  int64_t group() const { return heads / kvHeads; }
  bool empty() const { return batch == 0 || seq == 0 || headDim == 0; }
};

/// Causal attention on the host: tiled, online softmax (flash attention's
/// forward), no [seq, seq] buffer; scratch is O(tile * (block + headDim)).
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
