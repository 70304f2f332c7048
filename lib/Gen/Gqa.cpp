//===- Gqa.cpp - grouped-query causal self-attention ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Forward:  q, k, v split into heads ([B, H, T, hd], [B, KV, T, hd]); RoPE on
//           q and k; k and v repeated to H heads (head h reads kv head
//           h / G, G = H / KV, as HF's repeat_kv); the causal attention of
//           Attention.cpp; heads merged back to [B*T, H*hd].
// Backward: the attention's backward; the repeated heads' gradients summed
//           over each group; the inverse rotation on dq and dk.
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

/// `[B, KV, T, hd] -> [B*H, T, hd]`, head h reading kv head h / G.
static Value repeatKv(StepBuilder &sb, Value x, const GqaShape &s) {
  int64_t group = s.heads / s.kvHeads;
  if (group != 1) {
    AffineMap kvHead =
        sb.affineMap(4, {sb.d(0), sb.d(1).floorDiv(group), sb.d(2), sb.d(3)});
    x = sb.map({s.batch, s.heads, s.seq, s.headDim}, sb.act(), {{x, kvHead}},
               [](BodyBuilder &, ArrayRef<Value> a) { return V{a[0]}; });
  }
  return sb.collapse(x, {{0, 1}, {2}, {3}});
}

/// `[B*H, T, hd] -> [B, KV, T, hd]`, the sum over each group of heads.
static Value sumGroups(StepBuilder &sb, Value dx, const GqaShape &s) {
  int64_t group = s.heads / s.kvHeads;
  if (group == 1)
    return sb.toAct(sb.expand(dx, {s.batch, s.heads, s.seq, s.headDim},
                              {{0, 1}, {2}, {3}}));
  // Head kv * G + g: [B*H, T, hd] -> [B, KV, G, T, hd], reduced over G.
  Value dx5 = sb.expand(dx, {s.batch, s.kvHeads, group, s.seq, s.headDim},
                        {{0, 1, 2}, {3}, {4}});
  Value acc = sb.zeros({s.batch, s.kvHeads, s.seq, s.headDim}, sb.f32());
  Value sum = sb.generic(
      {{dx5, sb.identity(5)}}, {{acc, sb.project(5, {0, 1, 3, 4})}},
      {kPar, kPar, kRed, kPar, kPar}, [](BodyBuilder &e, ArrayRef<Value> a) {
        return V{e.add(a[1], a[0])};
      })[0];
  return sb.toAct(sum);
}

Value zshard::gen::gqaForward(StepBuilder &sb, Value q, Value k, Value v,
                              GqaShape shape, const RopeTables &rope,
                              GqaCache &cache) {
  Value qr = ropeForward(sb, splitHeads(sb, q, shape, shape.heads), rope);
  Value kr = ropeForward(sb, splitHeads(sb, k, shape, shape.kvHeads), rope);
  Value vh = splitHeads(sb, v, shape, shape.kvHeads);
  Value q3 = sb.collapse(qr, {{0, 1}, {2}, {3}});
  Value k3 = repeatKv(sb, kr, shape), v3 = repeatKv(sb, vh, shape);
  Value p;
  Value o = causalAttentionForward(sb, q3, k3, v3, p);
  cache = {shape, q3, k3, v3, p};
  return mergeHeads(
      sb, sb.expand(sb.toAct(o),
                    {shape.batch, shape.heads, shape.seq, shape.headDim},
                    {{0, 1}, {2}, {3}}));
}

GqaGrads zshard::gen::gqaBackward(StepBuilder &sb, Value dout,
                                  const RopeTables &rope,
                                  const GqaCache &cache) {
  const GqaShape &s = cache.shape;
  Value do3 = sb.collapse(splitHeads(sb, dout, s, s.heads), {{0, 1}, {2}, {3}});
  AttentionCoreGrads g =
      causalAttentionBackward(sb, do3, cache.q, cache.k, cache.v, cache.p);
  Value dq4 =
      sb.expand(g.dq, {s.batch, s.heads, s.seq, s.headDim}, {{0, 1}, {2}, {3}});
  GqaGrads out;
  out.dq = mergeHeads(sb, ropeBackward(sb, dq4, rope));
  out.dk = mergeHeads(sb, ropeBackward(sb, sumGroups(sb, g.dk, s), rope));
  out.dv = mergeHeads(sb, sumGroups(sb, g.dv, s));
  return out;
}
