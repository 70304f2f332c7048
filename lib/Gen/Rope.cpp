//===- Rope.cpp - rotary position embeddings (rotate-half) ----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// As HF Llama's apply_rotary_pos_emb: with x = [x1, x2] split in halves of
// hd/2 and angle[t, j] = t * theta^(-2j / hd) for j < hd/2,
//
//   y1 = x1 cos - x2 sin,   y2 = x2 cos + x1 sin
//
// (cos and sin repeated on both halves). The map is a rotation, so its
// backward is the inverse rotation, the same formula with -sin. The tables
// are computed once per step from linalg.index (no constant tensor).
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/LlamaLayers.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace zshard::gen;

using V = SmallVector<Value>;

/// A loop index as f32.
static Value indexToF32(BodyBuilder &e, Value index) {
  Value i64 = arith::IndexCastOp::create(e.builder, e.loc,
                                         e.builder.getI64Type(), index);
  return arith::SIToFPOp::create(e.builder, e.loc, e.builder.getF32Type(), i64);
}

RopeTables zshard::gen::ropeTables(StepBuilder &sb, int64_t seq,
                                   int64_t headDim, double theta) {
  int64_t half = headDim / 2;
  // theta^(-2j / hd) = exp(j * (-2 ln(theta) / hd)).
  double rate = -2.0 * std::log(theta) / static_cast<double>(headDim);
  AffineMap id2 = sb.identity(2);
  SmallVector<Value> cs =
      sb.generic({},
                 {{sb.empty({seq, half}, sb.f32()), id2},
                  {sb.empty({seq, half}, sb.f32()), id2}},
                 {kPar, kPar}, [&](BodyBuilder &e, ArrayRef<Value>) {
                   Value t = indexToF32(e, e.loopIndex(0));
                   Value j = indexToF32(e, e.loopIndex(1));
                   Value angle = e.mul(t, e.exp(e.mul(j, e.cst(rate))));
                   return V{math::CosOp::create(e.builder, e.loc, angle),
                            math::SinOp::create(e.builder, e.loc, angle)};
                 });
  return {cs[0], cs[1]};
}

/// `[x1, x2] -> [x1 cos - s x2 sin, x2 cos + s x1 sin]` on `[B, H, T, hd]`
/// for `s = sign`.
static Value rotate(StepBuilder &sb, Value x, const RopeTables &tables,
                    float sign) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(x);
  int64_t b = shape[0], h = shape[1], t = shape[2], half = shape[3] / 2;
  Value x5 = sb.expand(x, {b, h, t, 2, half}, {{0}, {1}, {2}, {3, 4}});
  auto halfOf = [&](int64_t s) {
    return sb.affineMap(5, {sb.d(0), sb.d(1), sb.d(2),
                            getAffineConstantExpr(s, sb.context()), sb.d(4)});
  };
  AffineMap table = sb.project(5, {2, 4});
  Value y5 =
      sb.map({b, h, t, 2, half}, sb.act(),
             {{x5, halfOf(0)},
              {x5, halfOf(1)},
              {tables.cos, table},
              {tables.sin, table}},
             [&](BodyBuilder &e, ArrayRef<Value> a) {
               Value x1 = a[0], x2 = a[1], c = a[2];
               Value s = e.mul(e.cstF32(sign), a[3]);
               Value first = e.cmpIndex(arith::CmpIPredicate::eq,
                                        e.loopIndex(3), e.indexCst(0));
               return V{e.select(first, e.sub(e.mul(x1, c), e.mul(x2, s)),
                                 e.add(e.mul(x2, c), e.mul(x1, s)))};
             });
  return sb.collapse(y5, {{0}, {1}, {2}, {3, 4}});
}

Value zshard::gen::ropeForward(StepBuilder &sb, Value x,
                               const RopeTables &tables) {
  return rotate(sb, x, tables, 1.0f);
}

Value zshard::gen::ropeBackward(StepBuilder &sb, Value dy,
                                const RopeTables &tables) {
  return rotate(sb, dy, tables, -1.0f);
}
