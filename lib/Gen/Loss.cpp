//===- Loss.cpp - cross-entropy and mean squared error --------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Both losses are means, returned as `tensor<f32>`, with their gradient for
// an upstream gradient of 1.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/Layers.h"

using namespace mlir;
using namespace zshard::gen;

using V = SmallVector<Value>;

/// `total / count` as a 0-d f32 generic.
static Value divideScalar(StepBuilder &sb, Value total, int64_t count) {
  float countF = static_cast<float>(count);
  return sb.map({}, sb.f32(), {{total, sb.identity(0)}},
                [&](BodyBuilder &e, ArrayRef<Value> a) {
                  return V{e.div(a[0], e.cstF32(countF))};
                });
}

Value zshard::gen::crossEntropyForward(StepBuilder &sb, Value logits,
                                       Value labels, CrossEntropyCache &cache) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(logits);
  int64_t n = shape[0];
  AffineMap id2 = sb.identity(2), row = sb.project(2, {0});
  Value max = sb.reduceLast({{logits, id2}}, shape, /*isMax=*/true);
  Value sumExp =
      sb.reduceLast({{logits, id2}, {max, row}}, shape,
                    /*isMax=*/false, [](BodyBuilder &e, ArrayRef<Value> a) {
                      return V{e.exp(e.sub(a[0], a[1]))};
                    });
  // sum_n (max + log(sumExp) - logits[n, labels[n]])
  AffineMap id1 = sb.identity(1);
  Value total = sb.generic(
      {{max, id1}, {sumExp, id1}, {labels, id1}},
      {{sb.zeros({}, sb.f32()), sb.affineMap(1, {})}}, {kRed},
      [&](BodyBuilder &e, ArrayRef<Value> a) {
        Value lse = e.add(a[0], e.log(a[1]));
        Value picked = e.extract(logits, {e.loopIndex(0), e.toIndex(a[2])});
        return V{e.add(a[3], e.sub(lse, picked))};
      })[0];
  cache = {logits, labels, max, sumExp};
  return divideScalar(sb, total, n);
}

Value zshard::gen::crossEntropyBackward(StepBuilder &sb,
                                        const CrossEntropyCache &cache) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(cache.logits);
  float invN = 1.0f / static_cast<float>(shape[0]);
  AffineMap id2 = sb.identity(2), row = sb.project(2, {0});
  // Written over the logits (their last use) when they have the gradient's
  // element type: one [N, C] buffer instead of two, which for a large vocab
  // is the largest activation of the step.
  bool inPlace = StepBuilder::elementTypeOf(cache.logits) == sb.act();
  Value init = inPlace ? cache.logits : sb.empty(shape, sb.act());
  SmallVector<Operand> ins = {
      {cache.max, row}, {cache.sumExp, row}, {cache.labels, row}};
  if (!inPlace)
    ins.push_back({cache.logits, id2});
  return sb.generic(ins, {{init, id2}}, {kPar, kPar},
                    [&](BodyBuilder &e, ArrayRef<Value> a) {
                      // a: max, sumExp, label, logit (an input, or the output
                      // itself).
                      Value prob = e.div(e.exp(e.sub(a[3], a[0])), a[1]);
                      Value hit = e.cmpIndex(arith::CmpIPredicate::eq,
                                             e.loopIndex(1), e.toIndex(a[2]));
                      Value g = e.select(hit, e.sub(prob, e.cst(1.0)), prob);
                      return V{e.mul(g, e.cstF32(invN))};
                    })[0];
}

Value zshard::gen::mseForward(StepBuilder &sb, Value y, Value target) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(y);
  unsigned rank = shape.size();
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  SmallVector<utils::IteratorType> iters(rank, kRed);
  Value total =
      sb.generic({{y, sb.identity(rank)}, {target, sb.identity(rank)}},
                 {{sb.zeros({}, sb.f32()), sb.affineMap(rank, {})}}, iters,
                 [](BodyBuilder &e, ArrayRef<Value> a) {
                   Value diff = e.sub(a[0], a[1]);
                   return V{e.add(a[2], e.mul(diff, diff))};
                 })[0];
  return divideScalar(sb, total, count);
}

Value zshard::gen::mseBackward(StepBuilder &sb, Value y, Value target) {
  int64_t count = 1;
  for (int64_t extent : StepBuilder::shapeOf(y))
    count *= extent;
  float factor = 2.0f / static_cast<float>(count);
  return sb.elementwise(sb.act(), {y, target},
                        [&](BodyBuilder &e, ArrayRef<Value> a) {
                          return V{e.mul(e.sub(a[0], a[1]), e.cstF32(factor))};
                        });
}
