//===- GradientSums.cpp - whole sums over gradients -----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "GradientSums.h"

#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::zshard;

/// Whether `op` is `sum_i f(grad_i)` into a rank-0 tensor.
static bool isWholeSum(linalg::GenericOp op, Value grad) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getDpsInputOperand(0)->get() != grad)
    return false;
  auto gradType = cast<RankedTensorType>(grad.getType());
  auto outType = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
  if (!outType || outType.getRank() != 0 ||
      op.getNumLoops() != unsigned(gradType.getRank()) ||
      op.getNumReductionLoops() != op.getNumLoops() ||
      !op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isIdentity())
    return false;
  Block &body = op.getRegion().front();
  Value out = body.getArgument(1);
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || !out.hasOneUse())
    return false;
  return (add.getLhs() == out) != (add.getRhs() == out);
}

FailureOr<SmallVector<linalg::GenericOp>>
mlir::zshard::findGradientSums(Value grad, Operation *update, StringRef param) {
  SmallVector<linalg::GenericOp> sums;
  for (Operation *user : grad.getUsers()) {
    if (user == update)
      continue;
    auto sum = dyn_cast<linalg::GenericOp>(user);
    if (!sum || !isWholeSum(sum, grad))
      return emitError(getReportLoc(user))
             << "zshard-shard: the gradient of '" << param
             << "' is read here, outside its optimizer update; besides the "
                "update only whole sums of a gradient (such as the terms of "
                "a global gradient norm) can be sharded";
    if (!llvm::is_contained(sums, sum))
      sums.push_back(sum);
  }
  return sums;
}

/// `value`, or a copy of its pure defining ops at the builder's insertion
/// point when they come later in the block.
static Value availableAt(OpBuilder &builder, Value value) {
  Operation *def = value.getDefiningOp();
  Block::iterator at = builder.getInsertionPoint();
  if (!def || def->getBlock() != builder.getInsertionBlock() ||
      at == builder.getInsertionBlock()->end() || def->isBeforeInBlock(&*at) ||
      !isMemoryEffectFree(def))
    return value;
  IRMapping mapping;
  for (Value operand : def->getOperands())
    mapping.map(operand, availableAt(builder, operand));
  return builder.clone(*def, mapping)
      ->getResult(cast<OpResult>(value).getResultNumber());
}

linalg::GenericOp mlir::zshard::rebuildSum(OpBuilder &builder,
                                           linalg::GenericOp sum,
                                           Value operand) {
  MLIRContext *ctx = builder.getContext();
  unsigned rank = cast<RankedTensorType>(operand.getType()).getRank();
  Value init = availableAt(builder, sum.getDpsInits()[0]);
  SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(rank, ctx),
                              AffineMap::get(rank, 0, {}, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  auto clone = linalg::GenericOp::create(builder, sum.getLoc(),
                                         sum.getResultTypes(), operand, init,
                                         maps, iterators);
  IRMapping mapping;
  sum.getRegion().cloneInto(&clone.getRegion(), mapping);
  return clone;
}

void mlir::zshard::moveDependentsAfter(Operation *anchor, ValueRange values) {
  llvm::SmallPtrSet<Value, 16> tainted(values.begin(), values.end());
  SmallVector<Operation *> dependents;
  for (Operation &op : *anchor->getBlock()) {
    if (&op == anchor)
      break;
    bool depends = false;
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (tainted.contains(operand))
          depends = true;
    });
    if (!depends)
      continue;
    dependents.push_back(&op);
    tainted.insert(op.result_begin(), op.result_end());
  }
  Operation *after = anchor;
  for (Operation *op : dependents) {
    op->moveAfter(after);
    after = op;
  }
}

LogicalResult
mlir::zshard::combinePartialSums(MutableArrayRef<PartialSum> partialSums) {
  if (partialSums.empty())
    return success();
  UnitOp first = partialSums.front().unit;
  Operation *last = nullptr;
  for (PartialSum &p : partialSums) {
    if (p.unit.getGridAttr() != first.getGridAttr() ||
        p.unit.getShardAxes() != first.getShardAxes())
      return p.unit.emitOpError()
             << "shards gradients that a whole sum adds up on another grid "
                "or shard axes than unit '"
             << first.getSymName() << "'; zshard-shard needs one shard group "
             << "for a sum across units";
    if (p.partial.getType() != partialSums.front().partial.getType())
      return emitError(getReportLoc(p.sum),
                       "zshard-shard: whole sums over gradients of "
                       "different element types cannot be reduced "
                       "together");
    Operation *def = p.partial.getDefiningOp();
    if (!last || last->isBeforeInBlock(def))
      last = def;
  }
  // One all-reduce of all partial sums, after the last of them.
  OpBuilder builder(last->getContext());
  builder.setInsertionPointAfter(last);
  Location loc = getStepLoc(last->getParentOfType<func::FuncOp>());
  Type element =
      cast<RankedTensorType>(partialSums.front().partial.getType())
          .getElementType();
  SmallVector<Value> scalars;
  for (const PartialSum &p : partialSums)
    scalars.push_back(
        tensor::ExtractOp::create(builder, loc, p.partial, ValueRange{}));
  Value all = tensor::FromElementsOp::create(
      builder, loc,
      RankedTensorType::get({int64_t(scalars.size())}, element), scalars);
  Value total = AllReduceOp::create(
      builder, loc, all.getType(),
      ReduceKindAttr::get(builder.getContext(), ReduceKind::Sum), all,
      first.getGridAttr(), builder.getDenseI64ArrayAttr(first.getShardAxes()),
      FlatSymbolRefAttr());
  SmallVector<Value> totals;
  for (auto [i, p] : llvm::enumerate(partialSums)) {
    Value index = arith::ConstantIndexOp::create(builder, loc, int64_t(i));
    Value scalar = tensor::ExtractOp::create(builder, loc, total, index);
    totals.push_back(tensor::FromElementsOp::create(
        builder, loc, p.partial.getType(), ValueRange{scalar}));
    p.sum->getResult(0).replaceAllUsesWith(totals.back());
    p.sum->erase();
  }
  moveDependentsAfter(totals.back().getDefiningOp(), totals);
  return success();
}
