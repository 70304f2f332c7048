//===- Layers.cpp - linear, GELU, LayerNorm, embedding --------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The arithmetic follows docs/models.md in the order it is written there, so
// that an f32 step rounds like a plain f32 implementation of the same maths.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/Layers.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace zshard::gen;

using V = SmallVector<Value>;

static constexpr double kLayerNormEps = 1e-5;
static constexpr double kGeluK = 0.044715;

//===----------------------------------------------------------------------===//
// Linear
//===----------------------------------------------------------------------===//

Value zshard::gen::linearForward(StepBuilder &sb, Value x, Value w,
                                 Value bias) {
  Value acc = sb.matmul(x, w);
  if (!bias)
    return sb.toAct(acc);
  SmallVector<int64_t> shape = StepBuilder::shapeOf(acc);
  return sb.map(
      shape, sb.act(), {{acc, sb.identity(2)}, {bias, sb.project(2, {1})}},
      [](BodyBuilder &e, ArrayRef<Value> a) { return V{e.add(a[0], a[1])}; });
}

LinearGrads zshard::gen::linearBackward(StepBuilder &sb, Value dy, Value x,
                                        Value w, bool hasBias, bool needDx) {
  LinearGrads g;
  if (needDx)
    g.dx =
        sb.toAct(sb.matmul(dy, w, /*transposeA=*/false, /*transposeB=*/true));
  g.dw = sb.toAct(sb.matmul(x, dy, /*transposeA=*/true));
  if (hasBias)
    g.db = sb.toAct(sb.sumLeading(dy, 1));
  return g;
}

//===----------------------------------------------------------------------===//
// GELU (tanh form)
//===----------------------------------------------------------------------===//

static Value geluInner(BodyBuilder &e, Value x) {
  // tanh(c * (x + k * x * x * x))
  Value c = e.cst(std::sqrt(2.0 / M_PI));
  Value cube = e.mul(e.mul(e.mul(e.cst(kGeluK), x), x), x);
  return e.tanh(e.mul(c, e.add(x, cube)));
}

Value zshard::gen::geluForward(StepBuilder &sb, Value x) {
  return sb.elementwise(sb.act(), {x}, [](BodyBuilder &e, ArrayRef<Value> a) {
    Value t = geluInner(e, a[0]);
    // 0.5 * x * (1 + t)
    return V{e.mul(e.mul(e.cst(0.5), a[0]), e.add(e.cst(1.0), t))};
  });
}

Value zshard::gen::geluBackward(StepBuilder &sb, Value dy, Value x) {
  return sb.elementwise(
      sb.act(), {dy, x}, [](BodyBuilder &e, ArrayRef<Value> a) {
        Value dyv = a[0], xv = a[1];
        Value t = geluInner(e, xv);
        Value one = e.cst(1.0), half = e.cst(0.5);
        // dudx = c * (1 + 3k * x * x)
        Value threeK = e.cstF32(3.0f * static_cast<float>(kGeluK));
        Value dudx = e.mul(e.cst(std::sqrt(2.0 / M_PI)),
                           e.add(one, e.mul(e.mul(threeK, xv), xv)));
        // dy * (0.5 (1 + t) + 0.5 x (1 - t^2) dudx)
        Value left = e.mul(half, e.add(one, t));
        Value right =
            e.mul(e.mul(e.mul(half, xv), e.sub(one, e.mul(t, t))), dudx);
        return V{e.mul(dyv, e.add(left, right))};
      });
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

Value zshard::gen::layerNormForward(StepBuilder &sb, Value x, Value w, Value b,
                                    LayerNormCache &cache) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(x);
  int64_t n = shape[0], d = shape[1];
  float dF = static_cast<float>(d);
  AffineMap id2 = sb.identity(2), row = sb.project(2, {0}),
            col = sb.project(2, {1});

  // sum_d x
  Value sum = sb.reduceLast({{x, id2}}, shape, /*isMax=*/false);
  // sum_d (x - sum / D)^2
  Value sumSq = sb.reduceLast({{x, id2}, {sum, row}}, shape, /*isMax=*/false,
                              [&](BodyBuilder &e, ArrayRef<Value> a) {
                                Value xc =
                                    e.sub(a[0], e.div(a[1], e.cstF32(dF)));
                                return V{e.mul(xc, xc)};
                              });
  // mean = sum / D, rstd = 1 / sqrt(sumSq / D + eps)
  Value meanInit = sb.empty({n}, sb.f32()), rstdInit = sb.empty({n}, sb.f32());
  AffineMap id1 = sb.identity(1);
  SmallVector<Value> stats =
      sb.generic({{sum, id1}, {sumSq, id1}}, {{meanInit, id1}, {rstdInit, id1}},
                 {kPar}, [&](BodyBuilder &e, ArrayRef<Value> a) {
                   Value mean = e.div(a[0], e.cstF32(dF));
                   Value var = e.div(a[1], e.cstF32(dF));
                   Value rstd = e.div(e.cst(1.0),
                                      e.sqrt(e.add(var, e.cst(kLayerNormEps))));
                   return V{mean, rstd};
                 });
  cache = {x, stats[0], stats[1]};
  // y = (x - mean) * rstd * w + b
  return sb.map(
      shape, sb.act(),
      {{x, id2}, {stats[0], row}, {stats[1], row}, {w, col}, {b, col}},
      [](BodyBuilder &e, ArrayRef<Value> a) {
        Value xhat = e.mul(e.sub(a[0], a[1]), a[2]);
        return V{e.add(e.mul(xhat, a[3]), a[4])};
      });
}

LayerNormGrads zshard::gen::layerNormBackward(StepBuilder &sb, Value dy,
                                              Value w,
                                              const LayerNormCache &cache) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(dy);
  int64_t n = shape[0], d = shape[1];
  float dF = static_cast<float>(d);
  AffineMap id2 = sb.identity(2), row = sb.project(2, {0}),
            col = sb.project(2, {1});
  auto xhatOf = [](BodyBuilder &e, Value x, Value mean, Value rstd) {
    return e.mul(e.sub(x, mean), rstd);
  };
  // Row sums of dxhat = dy * w and of dxhat * xhat.
  Value s1 = sb.zeros({n}, sb.f32()), s2 = sb.zeros({n}, sb.f32());
  SmallVector<Value> sums = sb.generic(
      {{dy, id2},
       {w, col},
       {cache.x, id2},
       {cache.mean, row},
       {cache.rstd, row}},
      {{s1, row}, {s2, row}}, {kPar, kRed},
      [&](BodyBuilder &e, ArrayRef<Value> a) {
        Value dxhat = e.mul(a[0], a[1]);
        Value xhat = xhatOf(e, a[2], a[3], a[4]);
        return V{e.add(a[5], dxhat), e.add(a[6], e.mul(dxhat, xhat))};
      });
  LayerNormGrads g;
  // dx = rstd * (dxhat - s1 / D - xhat * (s2 / D))
  g.dx =
      sb.map(shape, sb.act(),
             {{dy, id2},
              {w, col},
              {cache.x, id2},
              {cache.mean, row},
              {cache.rstd, row},
              {sums[0], row},
              {sums[1], row}},
             [&](BodyBuilder &e, ArrayRef<Value> a) {
               Value dxhat = e.mul(a[0], a[1]);
               Value xhat = xhatOf(e, a[2], a[3], a[4]);
               Value m1 = e.div(a[5], e.cstF32(dF));
               Value m2 = e.div(a[6], e.cstF32(dF));
               return V{e.mul(a[4], e.sub(e.sub(dxhat, m1), e.mul(xhat, m2)))};
             });
  // dw = sum_n dy * xhat, db = sum_n dy
  Value dwInit = sb.zeros({d}, sb.f32()), dbInit = sb.zeros({d}, sb.f32());
  SmallVector<Value> wb = sb.generic(
      {{dy, id2}, {cache.x, id2}, {cache.mean, row}, {cache.rstd, row}},
      {{dwInit, col}, {dbInit, col}}, {kRed, kPar},
      [&](BodyBuilder &e, ArrayRef<Value> a) {
        Value xhat = xhatOf(e, a[1], a[2], a[3]);
        return V{e.add(a[4], e.mul(a[0], xhat)), e.add(a[5], a[0])};
      });
  g.dw = sb.toAct(wb[0]);
  g.db = sb.toAct(wb[1]);
  return g;
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

Value zshard::gen::embeddingForward(StepBuilder &sb, Value table, Value ids) {
  SmallVector<int64_t> idShape = StepBuilder::shapeOf(ids);
  int64_t d = StepBuilder::shapeOf(table)[1];
  SmallVector<int64_t> shape(idShape);
  shape.push_back(d);
  unsigned rank = shape.size();
  SmallVector<unsigned> idDims;
  for (unsigned i = 0; i + 1 < rank; ++i)
    idDims.push_back(i);
  return sb.map(shape, sb.act(), {{ids, sb.project(rank, idDims)}},
                [&](BodyBuilder &e, ArrayRef<Value> a) {
                  Value row = e.toIndex(a[0]);
                  Value colIdx = e.loopIndex(rank - 1);
                  return V{e.extract(table, {row, colIdx})};
                });
}

Value zshard::gen::embeddingBackward(StepBuilder &sb, Value dout, Value ids,
                                     int64_t vocab, Value acc) {
  // acc[ids[i...], j] += dout[i..., j] in O(tokens x d): a parallel loop
  // over the columns j, each walking the tokens in order (so repeated ids
  // accumulate, race-free) and updating one column of the accumulator in
  // place. scf.forall bufferizes into a subview of acc; both targets lower
  // it (CPU: loops, CUDA: one thread per column).
  ImplicitLocOpBuilder &b = sb.builder();
  b.getContext()->getOrLoadDialect<scf::SCFDialect>();
  SmallVector<int64_t> idShape = StepBuilder::shapeOf(ids);
  int64_t d = StepBuilder::shapeOf(dout).back();
  if (!acc)
    acc = sb.zeros({vocab, d}, sb.f32());
  auto columnType = RankedTensorType::get({vocab}, sb.f32());
  auto forall =
      scf::ForallOp::create(b, ArrayRef<OpFoldResult>{b.getIndexAttr(d)},
                            ValueRange{acc}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value j = forall.getInductionVars()[0];
  Value shared = forall.getRegionIterArgs()[0];
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), j};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(vocab), b.getIndexAttr(1)};
  SmallVector<OpFoldResult> strides = {b.getIndexAttr(1), b.getIndexAttr(1)};
  Value column = tensor::ExtractSliceOp::create(b, columnType, shared, offsets,
                                                sizes, strides);
  // One scf.for per token dim, the column threaded through them.
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  SmallVector<Value> tokenIndex;
  SmallVector<scf::ForOp> loops;
  Value current = column;
  for (int64_t extent : idShape) {
    Value upper = arith::ConstantIndexOp::create(b, extent);
    auto loop = scf::ForOp::create(b, zero, upper, one, ValueRange{current});
    b.setInsertionPointToStart(loop.getBody());
    tokenIndex.push_back(loop.getInductionVar());
    current = loop.getRegionIterArgs()[0];
    loops.push_back(loop);
  }
  BodyBuilder e(b, b.getLoc());
  Value row = e.toIndex(tensor::ExtractOp::create(b, ids, tokenIndex));
  SmallVector<Value> doutIndex(tokenIndex);
  doutIndex.push_back(j);
  Value grad = e.extract(dout, doutIndex); // f32, as acc
  Value old = tensor::ExtractOp::create(b, current, ValueRange{row});
  Value sum = arith::AddFOp::create(b, old, grad);
  Value updated = tensor::InsertOp::create(b, sum, current, ValueRange{row});
  for (scf::ForOp loop : llvm::reverse(loops)) {
    scf::YieldOp::create(b, updated);
    updated = loop.getResult(0);
    b.setInsertionPointAfter(loop);
  }
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, updated, shared, offsets, sizes,
                                        strides);
  return forall.getResult(0);
}

Value zshard::gen::addPositions(StepBuilder &sb, Value x, Value table) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(x);
  return sb.map(
      shape, sb.act(), {{x, sb.identity(3)}, {table, sb.project(3, {1, 2})}},
      [](BodyBuilder &e, ArrayRef<Value> a) { return V{e.add(a[0], a[1])}; });
}

Value zshard::gen::addTensors(StepBuilder &sb, Value a, Value b) {
  return sb.elementwise(
      sb.act(), {a, b},
      [](BodyBuilder &e, ArrayRef<Value> x) { return V{e.add(x[0], x[1])}; });
}
