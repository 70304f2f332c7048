//===- RmsNorm.cpp - RMSNorm over the last dim ----------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Forward:  rstd = 1 / sqrt(sum_d x^2 / D + eps), xhat = x * rstd,
//           y = xhat * w (HF LlamaRMSNorm: no mean, no bias)
// Backward: dxhat = dy * w, dx = rstd * (dxhat - xhat * sum_d(dxhat xhat) / D),
//           dw = sum_n dy * xhat
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/LlamaLayers.h"

using namespace mlir;
using namespace zshard::gen;

using V = SmallVector<Value>;

Value zshard::gen::rmsNormForward(StepBuilder &sb, Value x, Value w, double eps,
                                  RmsNormCache &cache) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(x);
  float dF = static_cast<float>(shape[1]);
  AffineMap id1 = sb.identity(1), id2 = sb.identity(2),
            row = sb.project(2, {0}), col = sb.project(2, {1});
  Value sumSq = sb.reduceLast(
      {{x, id2}}, shape, /*isMax=*/false,
      [](BodyBuilder &e, ArrayRef<Value> a) { return V{e.mul(a[0], a[0])}; });
  Value rstd =
      sb.map({shape[0]}, sb.f32(), {{sumSq, id1}},
             [&](BodyBuilder &e, ArrayRef<Value> a) {
               Value ms = e.div(a[0], e.cstF32(dF));
               return V{e.div(e.cst(1.0), e.sqrt(e.add(ms, e.cst(eps))))};
             });
  cache = {x, rstd};
  return sb.map(shape, sb.act(), {{x, id2}, {rstd, row}, {w, col}},
                [](BodyBuilder &e, ArrayRef<Value> a) {
                  return V{e.mul(e.mul(a[0], a[1]), a[2])};
                });
}

RmsNormGrads zshard::gen::rmsNormBackward(StepBuilder &sb, Value dy, Value w,
                                          const RmsNormCache &cache) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(dy);
  int64_t d = shape[1];
  float dF = static_cast<float>(d);
  AffineMap id2 = sb.identity(2), row = sb.project(2, {0}),
            col = sb.project(2, {1});
  // Row sums of dxhat * xhat.
  Value dot = sb.reduceLast(
      {{dy, id2}, {w, col}, {cache.x, id2}, {cache.rstd, row}}, shape,
      /*isMax=*/false, [](BodyBuilder &e, ArrayRef<Value> a) {
        Value dxhat = e.mul(a[0], a[1]);
        return V{e.mul(dxhat, e.mul(a[2], a[3]))};
      });
  RmsNormGrads g;
  g.dx = sb.map(
      shape, sb.act(),
      {{dy, id2}, {w, col}, {cache.x, id2}, {cache.rstd, row}, {dot, row}},
      [&](BodyBuilder &e, ArrayRef<Value> a) {
        Value dxhat = e.mul(a[0], a[1]);
        Value xhat = e.mul(a[2], a[3]);
        Value m = e.div(a[4], e.cstF32(dF));
        return V{e.mul(a[3], e.sub(dxhat, e.mul(xhat, m)))};
      });
  Value dwInit = sb.zeros({d}, sb.f32());
  g.dw = sb.toAct(sb.generic(
      {{dy, id2}, {cache.x, id2}, {cache.rstd, row}}, {{dwInit, col}},
      {kRed, kPar}, [](BodyBuilder &e, ArrayRef<Value> a) {
        return V{e.add(a[3], e.mul(a[0], e.mul(a[1], a[2])))};
      })[0]);
  return g;
}
