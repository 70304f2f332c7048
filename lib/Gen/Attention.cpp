//===- Attention.cpp - causal multi-head self-attention -------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Forward:  q, k, v = split_heads(qkv)                  [B*H, T, D/H]
//           s = q @ k^T / sqrt(D/H), s[t, u] = -inf for u > t
//           p = softmax(s over u), o = merge_heads(p @ v)
// Backward: dv = p^T @ do, dp = do @ v^T,
//           ds = p * (dp - sum_u dp * p) / sqrt(D/H),
//           dq = ds @ k, dk = ds^T @ q, dqkv = concat(dq, dk, dv)
//
// The scores are masked inside the softmax generics (linalg.index compares
// t and u), so no mask tensor is materialised.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/Layers.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace zshard::gen;

using V = SmallVector<Value>;

/// The masked, scaled score at loops (i, t, u): `s / scale` for `u <= t`,
/// else -inf.
static Value maskedScore(BodyBuilder &e, Value s, float scale) {
  Value t = e.loopIndex(1), u = e.loopIndex(2);
  Value visible = e.cmpIndex(arith::CmpIPredicate::ule, u, t);
  return e.select(visible, e.div(s, e.cstF32(scale)),
                  e.cst(-std::numeric_limits<double>::infinity()));
}

Value zshard::gen::causalAttentionForward(StepBuilder &sb, Value q, Value k,
                                          Value v, Value &p) {
  SmallVector<int64_t> qs = StepBuilder::shapeOf(q);
  int64_t bh = qs[0], t = qs[1];
  float scale = std::sqrt(static_cast<float>(qs[2]));

  // Scores and the causal softmax.
  SmallVector<int64_t> sShape{bh, t, t};
  AffineMap id3 = sb.identity(3), row = sb.project(3, {0, 1});
  Value s = sb.matmul(q, k, /*transposeA=*/false, /*transposeB=*/true);
  Value max = sb.reduceLast({{s, id3}}, sShape, /*isMax=*/true,
                            [&](BodyBuilder &e, ArrayRef<Value> a) {
                              return V{maskedScore(e, a[0], scale)};
                            });
  Value sum =
      sb.reduceLast({{s, id3}, {max, row}}, sShape, /*isMax=*/false,
                    [&](BodyBuilder &e, ArrayRef<Value> a) {
                      return V{e.exp(e.sub(maskedScore(e, a[0], scale), a[1]))};
                    });
  p = sb.map(sShape, sb.act(), {{s, id3}, {max, row}, {sum, row}},
             [&](BodyBuilder &e, ArrayRef<Value> a) {
               Value ex = e.exp(e.sub(maskedScore(e, a[0], scale), a[1]));
               return V{e.div(ex, a[2])};
             });
  return sb.matmul(p, v);
}

AttentionCoreGrads zshard::gen::causalAttentionBackward(StepBuilder &sb,
                                                        Value dout, Value q,
                                                        Value k, Value v,
                                                        Value p) {
  SmallVector<int64_t> qs = StepBuilder::shapeOf(q);
  int64_t bh = qs[0], t = qs[1];
  float scale = std::sqrt(static_cast<float>(qs[2]));
  AffineMap id3 = sb.identity(3), row = sb.project(3, {0, 1});

  Value dv = sb.matmul(p, dout, /*transposeA=*/true);
  Value dp = sb.matmul(dout, v, /*transposeA=*/false, /*transposeB=*/true);
  SmallVector<int64_t> sShape{bh, t, t};
  Value rowDot =
      sb.reduceLast({{dp, id3}, {p, id3}}, sShape,
                    /*isMax=*/false, [](BodyBuilder &e, ArrayRef<Value> a) {
                      return V{e.mul(a[0], a[1])};
                    });
  Value ds = sb.map(sShape, sb.act(), {{p, id3}, {dp, id3}, {rowDot, row}},
                    [&](BodyBuilder &e, ArrayRef<Value> a) {
                      Value g = e.mul(a[0], e.sub(a[1], a[2]));
                      return V{e.div(g, e.cstF32(scale))};
                    });
  return {sb.matmul(ds, k), sb.matmul(ds, q, /*transposeA=*/true), dv};
}

Value zshard::gen::attentionForward(StepBuilder &sb, Value qkv,
                                    AttentionShape shape,
                                    AttentionCache &cache) {
  int64_t b = shape.batch, t = shape.seq, h = shape.heads, hd = shape.headDim;

  // [B*T, 3D] -> [B, T, 3, H, D/H]; q, k, v as [B, H, T, D/H] in one generic
  // whose input maps pick slot 0, 1, 2 of the third dim.
  Value qkv5 = sb.expand(qkv, {b, t, 3, h, hd}, {{0, 1}, {2, 3, 4}});
  auto slot = [&](int64_t j) {
    return sb.affineMap(4, {sb.d(0), sb.d(2),
                            getAffineConstantExpr(j, sb.context()), sb.d(1),
                            sb.d(3)});
  };
  SmallVector<Operand> outs;
  for (int j = 0; j < 3; ++j)
    outs.push_back({sb.empty({b, h, t, hd}, sb.act()), sb.identity(4)});
  SmallVector<Value> heads = sb.generic(
      {{qkv5, slot(0)}, {qkv5, slot(1)}, {qkv5, slot(2)}}, outs,
      {kPar, kPar, kPar, kPar}, [](BodyBuilder &, ArrayRef<Value> a) {
        return V{a[0], a[1], a[2]};
      });
  for (Value &head : heads)
    head = sb.collapse(head, {{0, 1}, {2}, {3}});
  Value q = heads[0], k = heads[1], v = heads[2];

  Value p;
  Value o = causalAttentionForward(sb, q, k, v, p);

  // Heads merged back: [B*H, T, D/H] -> [B, T, H, D/H] -> [B*T, D].
  Value o4 = sb.expand(o, {b, h, t, hd}, {{0, 1}, {2}, {3}});
  Value merged =
      sb.map({b, t, h, hd}, sb.act(), {{o4, sb.project(4, {0, 2, 1, 3})}},
             [](BodyBuilder &, ArrayRef<Value> a) { return V{a[0]}; });
  cache = {shape, q, k, v, p};
  return sb.collapse(merged, {{0, 1}, {2, 3}});
}

Value zshard::gen::attentionBackward(StepBuilder &sb, Value dout,
                                     const AttentionCache &cache) {
  AttentionShape shape = cache.shape;
  int64_t b = shape.batch, t = shape.seq, h = shape.heads, hd = shape.headDim;

  // do: [B*T, D] -> [B, T, H, D/H] -> [B, H, T, D/H] -> [B*H, T, D/H].
  Value do4 = sb.expand(dout, {b, t, h, hd}, {{0, 1}, {2, 3}});
  Value doT = sb.transpose(do4, {0, 2, 1, 3});
  Value do3 = sb.collapse(doT, {{0, 1}, {2}, {3}});

  auto [dq, dk, dv] =
      causalAttentionBackward(sb, do3, cache.q, cache.k, cache.v, cache.p);

  // dqkv[b, t, j, h, :] = (dq, dk, dv)[j][b, h, t, :], then [B*T, 3D].
  SmallVector<Operand> ins;
  for (Value g : {dq, dk, dv})
    ins.push_back({sb.expand(g, {b, h, t, hd}, {{0, 1}, {2}, {3}}),
                   sb.project(5, {0, 3, 1, 4})});
  Value dqkv5 = sb.map(
      {b, t, 3, h, hd}, sb.act(), ins, [](BodyBuilder &e, ArrayRef<Value> a) {
        Value j = e.loopIndex(2);
        Value isQ = e.cmpIndex(arith::CmpIPredicate::eq, j, e.indexCst(0));
        Value isK = e.cmpIndex(arith::CmpIPredicate::eq, j, e.indexCst(1));
        return V{e.select(isQ, a[0], e.select(isK, a[1], a[2]))};
      });
  return sb.collapse(dqkv5, {{0, 1}, {2, 3, 4}});
}
