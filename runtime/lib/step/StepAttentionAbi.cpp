//===- StepAttentionAbi.cpp - zshard_rt_step_attention_* entries ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The entries compiled steps call for zshard.causal_attention and its
/// grad: the shape checked once here, then the current step device's
/// kernels (CUDA) or the host's (cpu/FlashAttention.cpp).
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
  return {batch, heads, kvHeads, seq, headDim, scale};
}

} // namespace

extern "C" void zshard_rt_step_attention_fwd(int64_t batch, int64_t heads,
                                             int64_t kvHeads, int64_t seq,
                                             int64_t headDim, float scale,
                                             const float *q, const float *k,
                                             const float *v, float *out,
                                             float *lse) {
  constexpr const char *entry = "zshard_rt_step_attention_fwd";
  StepAttentionShape s =
      checkShape(entry, batch, heads, kvHeads, seq, headDim, scale);
  if (s.empty())
    return;
  if (!q || !k || !v || !out || !lse)
    stepFatal(entry, "a buffer is NULL");
  if (Device *device = currentStepDevice())
    device->stepAttentionForward(s, q, k, v, out, lse);
  else
    cpuAttentionForward(s, q, k, v, out, lse);
}

extern "C" void zshard_rt_step_attention_bwd(
    int64_t batch, int64_t heads, int64_t kvHeads, int64_t seq, int64_t headDim,
    float scale, const float *q, const float *k, const float *v,
    const float *out, const float *lse, const float *dout, float *dq, float *dk,
    float *dv) {
  constexpr const char *entry = "zshard_rt_step_attention_bwd";
  StepAttentionShape s =
      checkShape(entry, batch, heads, kvHeads, seq, headDim, scale);
  if (s.empty())
    return;
  if (!q || !k || !v || !out || !lse || !dout || !dq || !dk || !dv)
    stepFatal(entry, "a buffer is NULL");
  if (Device *device = currentStepDevice())
    device->stepAttentionBackward(s, q, k, v, out, lse, dout, dq, dk, dv);
  else
    cpuAttentionBackward(s, q, k, v, out, lse, dout, dq, dk, dv);
}
