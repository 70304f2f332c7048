//===- LowerAdamW.cpp - --zshard-lower-adamw ------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The one place AdamW's arithmetic is written: each `zshard.adamw` becomes a
/// 0-d `linalg.generic` of its bias corrections and one fused elementwise
/// `linalg.generic` of the update, with the floating-point operations in the
/// op's order (see ZShardOps.td), so that zshard-gen's and zshard-export's
/// steps compute bit for bit what their references compute.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_LOWERADAMW
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// Scalar f32 arithmetic in a generic's body.
struct Body {
  OpBuilder &b;
  Location loc;

  Value cst(float value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value powf(Value x, Value y) { return math::PowFOp::create(b, loc, x, y); }
  /// `x` as f32 (extended when narrower).
  Value toF32(Value x) {
    if (x.getType().isF32())
      return x;
    return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  }
};

/// The hyper-parameters as the lowering rounds them: f32 values of the f64
/// attributes, and `1 - beta` either from the f32 beta in f32 (textbook) or
/// in f64 and then rounded (torch).
struct Constants {
  float beta1, beta2, eps, weightDecay, oneMinusBeta1, oneMinusBeta2;
  bool decay;

  explicit Constants(AdamWOp op) {
    double b1 = op.getBeta1().convertToDouble();
    double b2 = op.getBeta2().convertToDouble();
    beta1 = static_cast<float>(b1);
    beta2 = static_cast<float>(b2);
    eps = static_cast<float>(op.getEps().convertToDouble());
    weightDecay = static_cast<float>(op.getWeightDecay().convertToDouble());
    decay = op.getWeightDecay().convertToDouble() != 0;
    if (op.getOrder() == AdamWOrder::Torch) {
      oneMinusBeta1 = static_cast<float>(1.0 - b1);
      oneMinusBeta2 = static_cast<float>(1.0 - b2);
    } else {
      oneMinusBeta1 = 1.0f - beta1;
      oneMinusBeta2 = 1.0f - beta2;
    }
  }
};

/// The 0-d generic of the scalars the update reads besides lr: `1 - beta1^t`
/// and `1 - beta2^t` (textbook), or `lr / (1 - beta1^t)` and
/// `sqrt(1 - beta2^t)` (torch).
SmallVector<Value> biasCorrections(OpBuilder &builder, AdamWOp op,
                                   const Constants &c) {
  Location loc = op.getLoc();
  bool torch = op.getOrder() == AdamWOrder::Torch;
  auto scalar = RankedTensorType::get({}, builder.getF32Type());
  AffineMap map = AffineMap::get(0, 0, {}, builder.getContext());
  SmallVector<Value> ins = {op.getStep()};
  if (torch)
    ins.insert(ins.begin(), op.getLr());
  SmallVector<Value> outs;
  SmallVector<Type> types(2, scalar);
  for (int i = 0; i < 2; ++i)
    outs.push_back(tensor::EmptyOp::create(builder, loc, scalar.getShape(),
                                           scalar.getElementType()));
  SmallVector<AffineMap> maps(ins.size() + outs.size(), map);
  auto generic = linalg::GenericOp::create(
      builder, loc, types, ins, outs, maps, ArrayRef<utils::IteratorType>{},
      [&](OpBuilder &nested, Location, ValueRange args) {
        Body e{nested, loc};
        Value t = args[torch ? 1 : 0];
        Value one = e.cst(1.0f);
        Value bc1 = e.sub(one, e.powf(e.cst(c.beta1), t));
        Value bc2 = e.sub(one, e.powf(e.cst(c.beta2), t));
        SmallVector<Value> results = {bc1, bc2};
        if (torch) {
          results[0] = e.div(args[0], bc1);
          results[1] = e.sqrt(bc2);
        }
        linalg::YieldOp::create(nested, loc, results);
      });
  for (BlockArgument arg : generic.getRegion().front().getArguments())
    arg.setLoc(loc);
  return SmallVector<Value>(generic.getResults());
}

/// The fused update; returns the values replacing the op's results.
SmallVector<Value> lowerUpdate(OpBuilder &builder, AdamWOp op) {
  Location loc = op.getLoc();
  Constants c(op);
  bool torch = op.getOrder() == AdamWOrder::Torch;
  SmallVector<Value> scalars = biasCorrections(builder, op, c);

  auto paramType = cast<RankedTensorType>(op.getParam().getType());
  unsigned rank = paramType.getRank();
  Value master = op.getMaster();
  Value weights = master ? master : op.getParam();
  SmallVector<Value> ins = {weights,          op.getGrad(), op.getExpAvg(),
                            op.getExpAvgSq(), op.getLr(),   scalars[0],
                            scalars[1]};
  if (Value scale = op.getGradScale())
    ins.push_back(scale);

  // Outputs: the new weights, m and v in f32, then the rounded parameter.
  SmallVector<Value> dynamicSizes;
  for (unsigned d = 0; d < rank; ++d)
    if (paramType.isDynamicDim(d))
      dynamicSizes.push_back(tensor::DimOp::create(builder, loc, weights, d));
  auto empty = [&](Type element) -> Value {
    return tensor::EmptyOp::create(builder, loc, paramType.getShape(), element,
                                   dynamicSizes);
  };
  Type f32 = builder.getF32Type();
  SmallVector<Value> outs = {empty(f32), empty(f32), empty(f32)};
  bool rounded = master || !paramType.getElementType().isF32();
  if (rounded)
    outs.push_back(empty(paramType.getElementType()));

  MLIRContext *ctx = builder.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap scalar = AffineMap::get(rank, 0, {}, ctx);
  SmallVector<AffineMap> maps;
  for (Value in : ins)
    maps.push_back(cast<RankedTensorType>(in.getType()).getRank() == 0 &&
                           rank != 0
                       ? scalar
                       : id);
  maps.append(outs.size(), id);
  SmallVector<Type> resultTypes;
  for (Value out : outs)
    resultTypes.push_back(out.getType());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);

  auto generic = linalg::GenericOp::create(
      builder, loc, resultTypes, ins, outs, maps, iterators,
      [&](OpBuilder &nested, Location, ValueRange args) {
        Body e{nested, loc};
        Value p = e.toF32(args[0]), g = e.toF32(args[1]), m = args[2],
              v = args[3], lr = args[4];
        if (op.getGradScale())
          g = e.mul(g, args[7]);
        // One statement per op, so that the body reads in evaluation order.
        Value newP, newM, newV;
        if (torch) {
          Value stepSize = args[5], bc2Sqrt = args[6];
          if (c.decay) {
            Value one = e.cst(1.0f);
            Value lrWd = e.mul(lr, e.cst(c.weightDecay));
            p = e.mul(p, e.sub(one, lrWd));
          }
          Value w1 = e.cst(c.oneMinusBeta1);
          newM = e.add(m, e.mul(w1, e.sub(g, m)));
          Value vb2 = e.mul(v, e.cst(c.beta2));
          Value w2 = e.cst(c.oneMinusBeta2);
          newV = e.add(vb2, e.mul(e.mul(w2, g), g));
          Value sqrtV = e.div(e.sqrt(newV), bc2Sqrt);
          Value denom = e.add(sqrtV, e.cst(c.eps));
          Value numer = e.mul(e.neg(stepSize), newM);
          newP = e.add(p, e.div(numer, denom));
        } else {
          Value bc1 = args[5], bc2 = args[6];
          if (c.decay) {
            Value lrWd = e.mul(lr, e.cst(c.weightDecay));
            p = e.sub(p, e.mul(lrWd, p));
          }
          Value b1m = e.mul(e.cst(c.beta1), m);
          Value w1 = e.cst(c.oneMinusBeta1);
          newM = e.add(b1m, e.mul(w1, g));
          Value b2v = e.mul(e.cst(c.beta2), v);
          Value w2 = e.cst(c.oneMinusBeta2);
          newV = e.add(b2v, e.mul(e.mul(w2, g), g));
          Value sqrtV = e.sqrt(e.div(newV, bc2));
          Value denom = e.add(sqrtV, e.cst(c.eps));
          Value step = e.mul(lr, e.div(newM, bc1));
          newP = e.sub(p, e.div(step, denom));
        }
        SmallVector<Value> results = {newP, newM, newV};
        if (rounded)
          results.push_back(arith::TruncFOp::create(
              nested, loc, paramType.getElementType(), newP));
        linalg::YieldOp::create(nested, loc, results);
      });
  for (BlockArgument arg : generic.getRegion().front().getArguments())
    arg.setLoc(loc);

  SmallVector<Value> results(generic.getResults());
  if (!rounded)
    return results;
  // The op's results: new param, m, v, then the new master (if any).
  SmallVector<Value> replacements = {results[3], results[1], results[2]};
  if (master)
    replacements.push_back(results[0]);
  return replacements;
}

struct LowerAdamWPass
    : public mlir::zshard::impl::LowerAdamWBase<LowerAdamWPass> {
  void runOnOperation() override {
    SmallVector<AdamWOp> ops;
    getOperation().walk([&](AdamWOp op) { ops.push_back(op); });
    for (AdamWOp op : ops) {
      OpBuilder builder(op);
      // The lowered update stays at the path of the module owning the
      // parameter.
      ModulePathStamper stamper(getModulePath(op));
      builder.setListener(&stamper);
      op->replaceAllUsesWith(lowerUpdate(builder, op));
      op->erase();
      ++numLowered;
    }
  }
};

} // namespace
