//===- Recomputable.cpp - Producers made cheap to compute again -----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// A log-softmax's result, `x - max - log(sum)` over [tokens, vocab], is
// read by the cross-entropy (one element a row, a tensor.extract in the
// loss's reduction) and by the backward. Written, it is one more pass over
// the largest tensor of the step and a buffer as large as the logits.
// Fusion computes a producer again in its consumers only where every use
// is a linalg.generic and its body is a few arith ops; two rewrites make
// this one so:
//
// 1. Math of broadcast inputs moves into an op of its own, over those
//    inputs' elements (the log of each row's sum, once a row), read back
//    through the same broadcast map:
//
//      %r = linalg.generic ins(%x, %s : (d0, d1), (d0)) { sub(x, log(s)) }
//    ->
//      %l = linalg.generic ins(%s : (d0)) { log(s) }
//      %r = linalg.generic ins(%x, %l : (d0, d1), (d0)) { sub(x, l) }
//
// 2. An element read of an elementwise generic (all loops parallel, a
//    permutation for its result, a body of at most kMaxRecomputedOps
//    arith ops: isCheapToRecompute) is
//    computed from its inputs' elements at the same point:
//
//      %e = tensor.extract %r[%i, %j]
//    ->
//      %e = sub(tensor.extract %x[%i, %j], tensor.extract %l[%i])
//
// Both compute each value with the same ops from the same operands: bit
// for bit what was computed before.
//
//===----------------------------------------------------------------------===//

#include "Recomputable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {

/// Whether every loop of `op` is parallel, on tensors.
bool isParallelOnTensors(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() &&
         op.getNumParallelLoops() == op.getNumLoops();
}

/// The input operand of `op` whose block argument is `value`, if it is one.
OpOperand *inputOf(linalg::GenericOp op, Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != &op.getRegion().front() ||
      arg.getArgNumber() >= op.getNumDpsInputs())
    return nullptr;
  return op.getDpsInputOperand(arg.getArgNumber());
}

struct HoistBroadcastMath : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!isParallelOnTensors(op))
      return failure();
    Block &body = op.getRegion().front();
    for (Operation &inner : body.without_terminator()) {
      if (!isa<math::MathDialect>(inner.getDialect()) ||
          inner.getNumResults() != 1 || inner.getNumRegions() != 0 ||
          !inner.getResult(0).getType().isIntOrFloat())
        continue;
      // Every operand an input read through one broadcast map, all of one
      // tensor type.
      SmallVector<OpOperand *> inputs;
      for (Value operand : inner.getOperands())
        if (OpOperand *input = inputOf(op, operand))
          inputs.push_back(input);
      if (inputs.empty() || inputs.size() != inner.getNumOperands())
        continue;
      AffineMap map = op.getMatchingIndexingMap(inputs.front());
      auto type = dyn_cast<RankedTensorType>(inputs.front()->get().getType());
      if (!type || !type.hasStaticShape() || map.isPermutation() ||
          llvm::any_of(inputs, [&](OpOperand *input) {
            return op.getMatchingIndexingMap(input) != map ||
                   input->get().getType() != type;
          }))
        continue;
      hoist(op, inner, inputs, map, type, rewriter);
      return success();
    }
    return failure();
  }

  static void hoist(linalg::GenericOp op, Operation &inner,
                    ArrayRef<OpOperand *> inputs, AffineMap map,
                    RankedTensorType type, PatternRewriter &rewriter) {
    Location loc = inner.getLoc();
    rewriter.setInsertionPoint(op);
    auto resultType =
        RankedTensorType::get(type.getShape(), inner.getResult(0).getType());
    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                          resultType.getElementType());
    SmallVector<Value> operands;
    for (OpOperand *input : inputs)
      operands.push_back(input->get());
    unsigned rank = type.getRank();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    SmallVector<AffineMap> maps(operands.size() + 1, identity);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto hoisted = linalg::GenericOp::create(
        rewriter, loc, resultType, operands, empty, maps, iterators,
        [&](OpBuilder &b, Location nested, ValueRange args) {
          IRMapping mapping;
          for (auto [operand, arg] : llvm::zip(inner.getOperands(), args))
            mapping.map(operand, arg);
          Operation *clone = b.clone(inner, mapping);
          linalg::YieldOp::create(b, nested, clone->getResult(0));
        });
    hoisted->setDiscardableAttrs(op->getDiscardableAttrDictionary());

    // The generic again, with the hoisted tensor as its last input.
    SmallVector<Value> newInputs(op.getDpsInputs());
    newInputs.push_back(hoisted.getResult(0));
    SmallVector<AffineMap> newMaps;
    for (OpOperand *input : op.getDpsInputOperands())
      newMaps.push_back(op.getMatchingIndexingMap(input));
    newMaps.push_back(map);
    for (OpOperand &init : op.getDpsInitsMutable())
      newMaps.push_back(op.getMatchingIndexingMap(&init));
    Block &body = op.getRegion().front();
    unsigned numInputs = op.getNumDpsInputs();
    auto rebuilt = linalg::GenericOp::create(
        rewriter, op.getLoc(), op->getResultTypes(), newInputs,
        op.getDpsInits(), newMaps, op.getIteratorTypesArray(),
        [&](OpBuilder &b, Location nested, ValueRange args) {
          IRMapping mapping;
          for (unsigned i = 0; i < numInputs; ++i)
            mapping.map(body.getArgument(i), args[i]);
          for (unsigned i = numInputs; i < body.getNumArguments(); ++i)
            mapping.map(body.getArgument(i), args[i + 1]);
          mapping.map(inner.getResult(0), args[numInputs]);
          for (Operation &bodyOp : body.without_terminator())
            if (&bodyOp != &inner)
              b.clone(bodyOp, mapping);
          SmallVector<Value> yields;
          for (Value yielded : body.getTerminator()->getOperands())
            yields.push_back(mapping.lookupOrDefault(yielded));
          linalg::YieldOp::create(b, nested, yields);
        });
    rebuilt->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, rebuilt->getResults());
  }
};

struct ExtractOfElementwise : public OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(extract.getTensor());
    auto producer =
        result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
    if (!producer || !zshard::isCheapToRecompute(producer))
      return failure();
    AffineMap resultMap = producer.getIndexingMapMatchingResult(result);
    if (!resultMap.isPermutation())
      return failure();
    Block &body = producer.getRegion().front();
    // Every map's results are loop indices or constants.
    for (AffineMap map : producer.getIndexingMapsArray())
      if (!llvm::all_of(map.getResults(), [](AffineExpr expr) {
            return isa<AffineDimExpr, AffineConstantExpr>(expr);
          }))
        return failure();

    Location loc = extract.getLoc();
    rewriter.setInsertionPoint(extract);
    // Loop index d is the extract's index at the position the result's
    // map gives d.
    SmallVector<Value> loops(producer.getNumLoops());
    for (auto [position, expr] : llvm::enumerate(resultMap.getResults()))
      loops[cast<AffineDimExpr>(expr).getPosition()] =
          extract.getIndices()[position];
    // The element of each operand the body reads (an init too, where the
    // body reads it), at the loop indices.
    IRMapping mapping;
    for (OpOperand &operand : producer->getOpOperands()) {
      BlockArgument arg = producer.getMatchingBlockArgument(&operand);
      if (arg.use_empty())
        continue;
      Value element = operand.get();
      if (isa<RankedTensorType>(element.getType())) {
        SmallVector<Value> indices;
        for (AffineExpr expr :
             producer.getMatchingIndexingMap(&operand).getResults()) {
          if (auto dim = dyn_cast<AffineDimExpr>(expr))
            indices.push_back(loops[dim.getPosition()]);
          else
            indices.push_back(arith::ConstantIndexOp::create(
                rewriter, loc, cast<AffineConstantExpr>(expr).getValue()));
        }
        element = tensor::ExtractOp::create(rewriter, loc, element, indices);
      }
      mapping.map(arg, element);
    }
    for (Operation &op : body.without_terminator())
      rewriter.clone(op, mapping);
    Value yielded = body.getTerminator()->getOperand(result.getResultNumber());
    rewriter.replaceOp(extract, mapping.lookupOrDefault(yielded));
    return success();
  }
};

} // namespace

bool mlir::zshard::isCheapToRecompute(linalg::GenericOp op) {
  if (!isParallelOnTensors(op))
    return false;
  Block &body = op.getRegion().front();
  unsigned ops = 0;
  for (Operation &inner : body.without_terminator())
    if (!isa<arith::ArithDialect>(inner.getDialect()) ||
        inner.getNumRegions() != 0 || ++ops > kMaxRecomputedOps)
      return false;
  return true;
}

void mlir::zshard::populateRecomputablePatterns(RewritePatternSet &patterns) {
  patterns.add<HoistBroadcastMath, ExtractOfElementwise>(patterns.getContext());
}
