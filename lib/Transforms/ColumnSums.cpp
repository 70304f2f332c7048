//===- ColumnSums.cpp - Column sums computed by their producer ------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// A Linear's bias gradient is the sum over the tokens of the gradient of its
// output, dY: a reduction over the rows of [tokens, features] that reads the
// whole of dY once more, after the producer wrote it and beside the two
// products (dX, dW) that read it too. Where dY comes from an elementwise op
// (a GELU's backward), the sum is computed by that op instead, as a second
// result:
//
//   %dy = linalg.generic {all parallel, identity output}         (producer)
//   %v = reshapes of %dy to [rows, cols]
//   %db = linalg.generic {[reduction, parallel], (r, c) -> (c)}
//           ins(%v) outs(%init) { %out + %in }                    (sum)
// ->
//   %dy, %db = linalg.generic {producer's loops, all but the last
//                reductions} ins(producer's inputs)
//                outs(producer's init, %init with (..., c) -> (c))
//                { v = producer's body; yield v, %acc + v }
//
// The reshapes keep the elements' row-major order, and the producer's last
// dimension is the sum's columns, so its leading dimensions run over the
// sum's rows in the same order: every column is summed in the same order
// from the same start, and the result is the reduction's bit for bit. The
// sum's loops had its rows outside its columns; so do the fused loops, with
// the columns innermost and contiguous.
//
//===----------------------------------------------------------------------===//

#include "ColumnSums.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {

/// Whether `value` can be used right before `op`: defined by an op before it
/// (in its block or around it) or an argument of a block around it.
bool availableBefore(Value value, Operation *op) {
  Block *block = value.getParentBlock();
  Operation *ancestor = block->findAncestorOpInBlock(*op);
  if (!ancestor)
    return false;
  Operation *def = value.getDefiningOp();
  return !def || def->isBeforeInBlock(ancestor);
}

/// The sum's init made available before `producer`: as it is, or, for a
/// linalg.fill of the producer's block whose value is available there and
/// whose init is too or is a static tensor.empty of that block, with those
/// moved before the producer (an op moved earlier still dominates its uses;
/// the fill and the empty may be shared by other sums).
LogicalResult makeAvailable(Value init, Operation *producer,
                            PatternRewriter &rewriter) {
  if (availableBefore(init, producer))
    return success();
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || fill->getBlock() != producer->getBlock() ||
      !availableBefore(fill.getInputs()[0], producer))
    return failure();
  Value target = fill.getOutputs()[0];
  if (!availableBefore(target, producer)) {
    auto empty = target.getDefiningOp<tensor::EmptyOp>();
    if (!empty || empty->getNumOperands() != 0 ||
        empty->getBlock() != producer->getBlock())
      return failure();
    rewriter.moveOpBefore(empty, producer);
  }
  rewriter.moveOpBefore(fill, producer);
  return success();
}

/// Whether `sum` is a plain sum over the rows of a 2-d tensor of floats:
/// loops [reduction, parallel], input (r, c), init (c), body `out + in`.
bool isColumnSum(linalg::GenericOp sum) {
  if (!sum.hasPureTensorSemantics() || sum.getNumDpsInputs() != 1 ||
      sum.getNumDpsInits() != 1 || sum.getNumLoops() != 2)
    return false;
  SmallVector<utils::IteratorType> iterators = sum.getIteratorTypesArray();
  if (iterators[0] != utils::IteratorType::reduction ||
      iterators[1] != utils::IteratorType::parallel)
    return false;
  MLIRContext *context = sum.getContext();
  SmallVector<AffineMap> maps = sum.getIndexingMapsArray();
  if (!maps[0].isIdentity() ||
      maps[1] != AffineMap::get(2, 0, getAffineDimExpr(1, context)))
    return false;
  auto type = dyn_cast<RankedTensorType>(sum.getResult(0).getType());
  if (!type || !type.hasStaticShape() || !isa<FloatType>(type.getElementType()))
    return false;
  Block &body = sum.getRegion().front();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return false;
  auto add = dyn_cast<arith::AddFOp>(body.front());
  if (!add || body.getTerminator()->getOperand(0) != add.getResult())
    return false;
  Value in = body.getArgument(0), out = body.getArgument(1);
  return (add.getLhs() == out && add.getRhs() == in) ||
         (add.getLhs() == in && add.getRhs() == out);
}

/// The elementwise generic whose result `value` is a reshape of, if it has
/// the sum's columns as its last dimension (and `rows` x `cols` elements).
linalg::GenericOp elementwiseProducer(Value value, int64_t rows, int64_t cols) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    value = def->getOperand(0);
  }
  auto producer = value.getDefiningOp<linalg::GenericOp>();
  if (!producer || !producer.hasPureTensorSemantics() ||
      producer->getNumResults() != 1 ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      !producer.getIndexingMapMatchingResult(cast<OpResult>(value))
           .isIdentity())
    return nullptr;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2 ||
      type.getShape().back() != cols || type.getNumElements() != rows * cols)
    return nullptr;
  return producer;
}

struct FuseColumnSum : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp sum,
                                PatternRewriter &rewriter) const override {
    if (!isColumnSum(sum))
      return failure();
    auto inputType = cast<RankedTensorType>(sum.getDpsInputs()[0].getType());
    linalg::GenericOp producer =
        elementwiseProducer(sum.getDpsInputs()[0], inputType.getDimSize(0),
                            inputType.getDimSize(1));
    if (!producer || producer->getBlock() != sum->getBlock() ||
        failed(makeAvailable(sum.getDpsInits()[0], producer, rewriter)))
      return failure();

    MLIRContext *context = sum.getContext();
    unsigned rank = producer.getNumLoops();
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::reduction);
    iterators.back() = utils::IteratorType::parallel;
    SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
    maps.push_back(
        AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, context)));
    SmallVector<Value> inits = {producer.getDpsInits()[0],
                                sum.getDpsInits()[0]};

    rewriter.setInsertionPoint(producer);
    Block &producerBody = producer.getRegion().front();
    Block &sumBody = sum.getRegion().front();
    auto fused = linalg::GenericOp::create(
        rewriter, rewriter.getFusedLoc({producer.getLoc(), sum.getLoc()}),
        TypeRange{producer.getResult(0).getType(), sum.getResult(0).getType()},
        producer.getDpsInputs(), inits, maps, iterators,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          IRMapping mapping;
          // The producer's inputs and init, then the sum's accumulator.
          mapping.map(producerBody.getArguments(), args.drop_back());
          for (Operation &op : producerBody.without_terminator())
            b.clone(op, mapping);
          Value element =
              mapping.lookup(producerBody.getTerminator()->getOperand(0));
          mapping.map(sumBody.getArgument(0), element);
          mapping.map(sumBody.getArgument(1), args.back());
          Operation *add = b.clone(sumBody.front(), mapping);
          linalg::YieldOp::create(b, loc,
                                  ValueRange{element, add->getResult(0)});
        });
    fused->setDiscardableAttrs(producer->getDiscardableAttrDictionary());
    rewriter.replaceAllUsesWith(producer.getResult(0), fused.getResult(0));
    rewriter.replaceOp(sum, fused.getResult(1));
    rewriter.eraseOp(producer);
    return success();
  }
};

} // namespace

void mlir::zshard::populateFuseColumnSumPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseColumnSum>(patterns.getContext());
}
