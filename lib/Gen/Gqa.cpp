//===- Gqa.cpp - grouped-query causal self-attention ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Forward:  q, k, v split into heads ([B, H, T, hd], [B, KV, T, hd]); RoPE on
//           q and k; zshard.causal_attention, whose head h reads kv head
//           h / G, G = H / KV, as HF's repeat_kv; heads merged back to
//           [B*T, H*hd].
// Backward: zshard.causal_attention_grad (its dk, dv already summed over
//           each group of heads); the inverse rotation on dq and dk.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/Layers.h"
#include "zshard/Gen/LlamaLayers.h"

using namespace mlir;
using namespace zshard::gen;

using V = SmallVector<Value>;

/// `[B*T, heads*hd] -> [B, heads, T, hd]`.
static Value splitHeads(StepBuilder &sb, Value x, const GqaShape &s,
                        int64_t heads) {
  Value x4 = sb.expand(x, {s.batch, s.seq, heads, s.headDim}, {{0, 1}, {2, 3}});
  return sb.transpose(x4, {0, 2, 1, 3});
}

/// `[B, heads, T, hd] -> [B*T, heads*hd]`.
static Value mergeHeads(StepBuilder &sb, Value x) {
  return sb.collapse(sb.transpose(x, {0, 2, 1, 3}), {{0, 1}, {2, 3}});
}

Value zshard::gen::gqaForward(StepBuilder &sb, Value q, Value k, Value v,
                              GqaShape shape, const RopeTables &rope,
                              GqaCache &cache) {
  Value qr = ropeForward(sb, splitHeads(sb, q, shape, shape.heads), rope);
  Value kr = ropeForward(sb, splitHeads(sb, k, shape, shape.kvHeads), rope);
  Value vh = splitHeads(sb, v, shape, shape.kvHeads);
  cache = {shape, causalAttentionForward(sb, qr, kr, vh)};
  return mergeHeads(sb, sb.toAct(cache.core.out));
}

GqaGrads zshard::gen::gqaBackward(StepBuilder &sb, Value dout,
                                  const RopeTables &rope,
                                  const GqaCache &cache) {
  const GqaShape &s = cache.shape;
  AttentionCoreGrads g =
      causalAttentionBackward(sb, splitHeads(sb, dout, s, s.heads), cache.core);
  GqaGrads out;
  out.dq = mergeHeads(sb, ropeBackward(sb, g.dq, rope));
  out.dk = mergeHeads(sb, ropeBackward(sb, sb.toAct(g.dk), rope));
  out.dv = mergeHeads(sb, sb.toAct(g.dv));
  return out;
}
