//===- StepAttentionAbi.cpp - zshard_rt_step_attention_* entries ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The entries compiled steps call for zshard.causal_attention and its
/// grad: the shape (and the strided entries' operand strides) checked once
/// here, then the current step device's kernels (CUDA) or the host's
/// (cpu/FlashAttention.cpp). The plain entries are the strided ones with
/// every operand contiguous.
///
//===----------------------------------------------------------------------===//

#include "device/CurrentDevice.h"
#include "device/Device.h"
#include "step/Fatal.h"
#include "step/StepAttention.h"

#include "zshard/runtime/zshard_rt.h"

#include <cmath>

using namespace zshard::rt;

namespace {

StepAttentionShape checkShape(const char *entry, int64_t batch, int64_t heads,
                              int64_t kvHeads, int64_t seq, int64_t headDim,
                              float scale) {
  if (batch < 0 || seq < 0 || headDim < 0 || heads <= 0 || kvHeads <= 0 ||
      heads % kvHeads != 0 || !std::isfinite(scale) || scale <= 0)
    stepFatal(entry,
              "batch %lld, heads %lld, kv heads %lld, seq %lld, head size "
              "%lld, scale %g: sizes must be non-negative, heads a multiple "
              "of kv heads, the scale finite and positive",
              static_cast<long long>(batch), static_cast<long long>(heads),
              static_cast<long long>(kvHeads), static_cast<long long>(seq),
              static_cast<long long>(headDim), double(scale));
  AttentionStrides dense = denseAttentionStrides(heads, seq, headDim);
  AttentionStrides denseKv = denseAttentionStrides(kvHeads, seq, headDim);
  return {batch,   heads,   kvHeads, seq,   headDim, scale,   dense,
          denseKv, denseKv, dense,   dense, dense,   denseKv, denseKv};
}

/// The strides of operand `name` of `s`, checked: none negative, and rows
/// of a head at least headDim apart (they would overlap, and the BLAS takes
/// nothing less) where there are several.
AttentionStrides checkStrides(const char *entry, const StepAttentionShape &s,
                              const char *name, int64_t batch, int64_t head,
                              int64_t seq) {
  if (batch < 0 || head < 0 || seq < 0 || (s.seq > 1 && seq < s.headDim))
    stepFatal(entry,
              "%s's strides (batch %lld, head %lld, seq %lld) must not be "
              "negative, and the seq stride at least the head size %lld",
              name, static_cast<long long>(batch), static_cast<long long>(head),
              static_cast<long long>(seq), static_cast<long long>(s.headDim));
  return {batch, head, seq};
}

/// Checks and sets the strides of the forward's operands in `s`.
void setForwardStrides(const char *entry, StepAttentionShape &s,
                       const AttentionStrides &q, const AttentionStrides &k,
                       const AttentionStrides &v, const AttentionStrides &out) {
  s.q = checkStrides(entry, s, "q", q.batch, q.head, q.seq);
  s.k = checkStrides(entry, s, "k", k.batch, k.head, k.seq);
  s.v = checkStrides(entry, s, "v", v.batch, v.head, v.seq);
  s.out = checkStrides(entry, s, "out", out.batch, out.head, out.seq);
}

void attentionForward(const char *entry, const StepAttentionShape &s,
                      const float *q, const float *k, const float *v,
                      float *out, float *lse) {
  if (s.empty())
    return;
  if (!q || !k || !v || !out || !lse)
    stepFatal(entry, "a buffer is NULL");
  if (Device *device = currentStepDevice())
    device->stepAttentionForward(s, q, k, v, out, lse);
  else
    cpuAttentionForward(s, q, k, v, out, lse);
}

void attentionBackward(const char *entry, const StepAttentionShape &s,
                       const float *q, const float *k, const float *v,
                       const float *out, const float *lse, const float *dout,
                       float *dq, float *dk, float *dv) {
  if (s.empty())
    return;
  if (!q || !k || !v || !out || !lse || !dout || !dq || !dk || !dv)
    stepFatal(entry, "a buffer is NULL");
  if (Device *device = currentStepDevice())
    device->stepAttentionBackward(s, q, k, v, out, lse, dout, dq, dk, dv);
  else
    cpuAttentionBackward(s, q, k, v, out, lse, dout, dq, dk, dv);
}

} // namespace

extern "C" void zshard_rt_step_attention_fwd(int64_t batch, int64_t heads,
                                             int64_t kvHeads, int64_t seq,
                                             int64_t headDim, float scale,
                                             const float *q, const float *k,
                                             const float *v, float *out,
                                             float *lse) {
  constexpr const char *entry = "zshard_rt_step_attention_fwd";
  attentionForward(
      entry, checkShape(entry, batch, heads, kvHeads, seq, headDim, scale), q,
      k, v, out, lse);
}

extern "C" void zshard_rt_step_attention_bwd(
    int64_t batch, int64_t heads, int64_t kvHeads, int64_t seq, int64_t headDim,
    float scale, const float *q, const float *k, const float *v,
    const float *out, const float *lse, const float *dout, float *dq, float *dk,
    float *dv) {
  constexpr const char *entry = "zshard_rt_step_attention_bwd";
  attentionBackward(
      entry, checkShape(entry, batch, heads, kvHeads, seq, headDim, scale), q,
      k, v, out, lse, dout, dq, dk, dv);
}

extern "C" void zshard_rt_step_attention_strided_fwd(
    int64_t batch, int64_t heads, int64_t kvHeads, int64_t seq, int64_t headDim,
    float scale, const float *q, int64_t qBatch, int64_t qHead, int64_t qSeq,
    const float *k, int64_t kBatch, int64_t kHead, int64_t kSeq, const float *v,
    int64_t vBatch, int64_t vHead, int64_t vSeq, float *out, int64_t outBatch,
    int64_t outHead, int64_t outSeq, float *lse) {
  constexpr const char *entry = "zshard_rt_step_attention_strided_fwd";
  StepAttentionShape s =
      checkShape(entry, batch, heads, kvHeads, seq, headDim, scale);
  setForwardStrides(entry, s, {qBatch, qHead, qSeq}, {kBatch, kHead, kSeq},
                    {vBatch, vHead, vSeq}, {outBatch, outHead, outSeq});
  attentionForward(entry, s, q, k, v, out, lse);
}

extern "C" void zshard_rt_step_attention_strided_bwd(
    int64_t batch, int64_t heads, int64_t kvHeads, int64_t seq, int64_t headDim,
    float scale, const float *q, int64_t qBatch, int64_t qHead, int64_t qSeq,
    const float *k, int64_t kBatch, int64_t kHead, int64_t kSeq, const float *v,
    int64_t vBatch, int64_t vHead, int64_t vSeq, const float *out,
    int64_t outBatch, int64_t outHead, int64_t outSeq, const float *lse,
    const float *dout, int64_t doutBatch, int64_t doutHead, int64_t doutSeq,
    float *dq, int64_t dqBatch, int64_t dqHead, int64_t dqSeq, float *dk,
    int64_t dkBatch, int64_t dkHead, int64_t dkSeq, float *dv, int64_t dvBatch,
    int64_t dvHead, int64_t dvSeq) {
  constexpr const char *entry = "zshard_rt_step_attention_strided_bwd";
  StepAttentionShape s =
      checkShape(entry, batch, heads, kvHeads, seq, headDim, scale);
  setForwardStrides(entry, s, {qBatch, qHead, qSeq}, {kBatch, kHead, kSeq},
                    {vBatch, vHead, vSeq}, {outBatch, outHead, outSeq});
  s.dout = checkStrides(entry, s, "dout", doutBatch, doutHead, doutSeq);
  s.dq = checkStrides(entry, s, "dq", dqBatch, dqHead, dqSeq);
  s.dk = checkStrides(entry, s, "dk", dkBatch, dkHead, dkSeq);
  s.dv = checkStrides(entry, s, "dv", dvBatch, dvHead, dvSeq);
  attentionBackward(entry, s, q, k, v, out, lse, dout, dq, dk, dv);
}
