//===- Attention.cpp - causal multi-head self-attention -------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Forward:  q, k, v = split_heads(qkv)                  [B, H, T, D/H]
//           out, lse = zshard.causal_attention(q, k, v), scale 1/sqrt(D/H)
//           o = merge_heads(out)
// Backward: dq, dk, dv = zshard.causal_attention_grad(q, k, v, out, lse, do)
//           dqkv = concat(dq, dk, dv)
//
// The op keeps only out and the per-row logsumexp for the backward, which
// recomputes the scores tile by tile (docs/attention.md): no [T, T] tensor
// is a value of the step.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/Layers.h"

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

#include <cmath>

using namespace mlir;
using namespace ::zshard::gen;

namespace zshard::gen {

using V = SmallVector<Value>;

AttentionCore causalAttentionForward(StepBuilder &sb, Value q, Value k,
                                     Value v) {
  float scale =
      1.0f / std::sqrt(static_cast<float>(StepBuilder::shapeOf(q)[3]));
  AttentionCore core{sb.convert(q, sb.f32()), sb.convert(k, sb.f32()),
                     sb.convert(v, sb.f32()), Value(), Value()};
  auto op = mlir::zshard::CausalAttentionOp::create(
      sb.builder(), core.q, core.k, core.v,
      sb.builder().getF32FloatAttr(scale));
  core.out = op.getOut();
  core.lse = op.getLse();
  return core;
}

AttentionCoreGrads causalAttentionBackward(StepBuilder &sb, Value dout,
                                           const AttentionCore &core) {
  auto op = mlir::zshard::CausalAttentionGradOp::create(
      sb.builder(), core.q, core.k, core.v, core.out, core.lse,
      sb.convert(dout, sb.f32()),
      cast<mlir::zshard::CausalAttentionOp>(core.out.getDefiningOp())
          .getScaleAttr());
  return {op.getDq(), op.getDk(), op.getDv()};
}

Value attentionForward(StepBuilder &sb, Value qkv, AttentionShape shape,
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
  AttentionCore core = causalAttentionForward(sb, heads[0], heads[1], heads[2]);

  // Heads merged back: [B, H, T, D/H] -> [B, T, H, D/H] -> [B*T, D].
  Value merged =
      sb.map({b, t, h, hd}, sb.act(), {{core.out, sb.project(4, {0, 2, 1, 3})}},
             [](BodyBuilder &, ArrayRef<Value> a) { return V{a[0]}; });
  cache = {shape, core};
  return sb.collapse(merged, {{0, 1}, {2, 3}});
}

Value attentionBackward(StepBuilder &sb, Value dout,
                        const AttentionCache &cache) {
  AttentionShape shape = cache.shape;
  int64_t b = shape.batch, t = shape.seq, h = shape.heads, hd = shape.headDim;

  // do: [B*T, D] -> [B, T, H, D/H] -> [B, H, T, D/H].
  Value do4 = sb.expand(dout, {b, t, h, hd}, {{0, 1}, {2, 3}});
  Value doT = sb.transpose(do4, {0, 2, 1, 3});

  auto [dq, dk, dv] = causalAttentionBackward(sb, doT, cache.core);

  // dqkv[b, t, j, h, :] = (dq, dk, dv)[j][b, h, t, :], then [B*T, 3D].
  SmallVector<Operand> ins;
  for (Value g : {dq, dk, dv})
    ins.push_back({g, sb.project(5, {0, 3, 1, 4})});
  Value dqkv5 = sb.map(
      {b, t, 3, h, hd}, sb.act(), ins, [](BodyBuilder &e, ArrayRef<Value> a) {
        Value j = e.loopIndex(2);
        Value isQ = e.cmpIndex(arith::CmpIPredicate::eq, j, e.indexCst(0));
        Value isK = e.cmpIndex(arith::CmpIPredicate::eq, j, e.indexCst(1));
        return V{e.select(isQ, a[0], e.select(isK, a[1], a[2]))};
      });
  return sb.collapse(dqkv5, {{0, 1}, {2, 3, 4}});
}

} // namespace zshard::gen
