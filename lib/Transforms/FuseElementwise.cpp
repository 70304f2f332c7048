//===- FuseElementwise.cpp - --zshard-fuse-elementwise --------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Transforms/Passes.h"

#include "ColumnSums.h"
#include "OneHotSums.h"
#include "Recomputable.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `producer` writes narrower elements than it reads from a tensor
/// of the same shape (an f32 -> bf16 cast). Fusing it into its consumer
/// would keep the wide tensor live until the consumer runs: a bf16 step's
/// f32 weight gradients would then live from backward to the optimizer,
/// twice the gradient memory of the FSDP table.
bool narrows(Operation *producer) {
  auto widthOf = [](RankedTensorType type) -> unsigned {
    Type element = type.getElementType();
    return element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
  };
  for (Type resultType : producer->getResultTypes()) {
    auto result = dyn_cast<RankedTensorType>(resultType);
    if (!result)
      continue;
    for (Type operandType : producer->getOperandTypes())
      if (auto operand = dyn_cast<RankedTensorType>(operandType);
          operand && operand.getShape() == result.getShape() &&
          widthOf(operand) > widthOf(result))
        return true;
  }
  return false;
}

bool isView(Operation *op) {
  return isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp>(op);
}

/// The tensor whose buffer `value` is a view of.
Value viewRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isView(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

/// Whether `root`, or a view of it, is used at or after `last` (or outside
/// its block): whether its buffer lives that long anyway.
bool usedFrom(Value root, Operation *last) {
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isView(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      Operation *inBlock = last->getBlock()->findAncestorOpInBlock(*user);
      if (!inBlock || inBlock == last || last->isBeforeInBlock(inBlock))
        return true;
    }
  }
  return false;
}

/// A recomputed producer's inputs read through a broadcast map (a row's
/// mean) may outlive it by up to 1/kBroadcastAllowance of its result's bytes
/// in fusion's second round.
constexpr int64_t kBroadcastAllowance = 64;

/// The bytes of a statically shaped tensor, if it is one.
std::optional<int64_t> tensorBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// Whether `producer`, used more than once, is better computed again in
/// every consumer. It must be cheap (isCheapToRecompute: all its loops
/// parallel, at most kMaxRecomputedOps arith ops an element), move no more
/// bytes, and read at most one of its inputs element for element (the
/// others broadcast: a row's mean, a feature's weight), so that each
/// consumer reads that input in place of the producer's result. Each use
/// must be an input of a
/// linalg.generic of the producer's block that reads every element once (a
/// permutation map) and into which it fuses. And it must not raise the
/// peak memory: the buffers of its inputs that would now live until the
/// last consumer, and would not otherwise, may take no more bytes than its
/// result, which no longer exists; with `broadcastAllowance`, no more than
/// its result and the allowance for those of them read through a broadcast
/// map (LayerNorm's `x - mean`: x's buffer replaces the result's, and the
/// row means, 1/256 of it at d256, would hold it back otherwise).
bool recomputedInEveryUse(Operation *producer, bool broadcastAllowance) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || generic->getNumResults() != 1 ||
      !zshard::isCheapToRecompute(generic))
    return false;
  if (llvm::count_if(generic.getDpsInputOperands(), [&](OpOperand *input) {
        return generic.getMatchingIndexingMap(input).isPermutation();
      }) > 1)
    return false;

  Operation *last = producer;
  for (OpOperand &use : producer->getResult(0).getUses()) {
    auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!consumer || consumer->getBlock() != producer->getBlock() ||
        !consumer.isDpsInput(&use) ||
        !consumer.getMatchingIndexingMap(&use).isPermutation() ||
        !linalg::areElementwiseOpsFusable(&use))
      return false;
    if (last->isBeforeInBlock(consumer))
      last = consumer;
  }

  std::optional<int64_t> freed = tensorBytes(producer->getResult(0));
  if (!freed)
    return false;
  int64_t extended = 0, extendedBroadcast = 0;
  llvm::SmallDenseSet<Value> roots;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    Value root = viewRoot(input->get());
    // The step's arguments live throughout; a scalar is no buffer.
    if (isa<BlockArgument>(root) || !isa<RankedTensorType>(root.getType()) ||
        !roots.insert(root).second || usedFrom(root, last))
      continue;
    std::optional<int64_t> bytes = tensorBytes(root);
    if (!bytes)
      return false;
    extended += *bytes;
    if (!generic.getMatchingIndexingMap(input).isPermutation())
      extendedBroadcast += *bytes;
  }
  int64_t allowance =
      broadcastAllowance
          ? std::min(extendedBroadcast, *freed / kBroadcastAllowance)
          : 0;
  return extended <= *freed + allowance;
}

struct FuseElementwisePass
    : public mlir::zshard::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  /// The allowance for broadcast inputs comes in a second round, once the
  /// first has reached its fixpoint: the patterns that fold a whole chain
  /// then have seen it whole. Recomputing the cross-entropy backward's
  /// scaled one-hot in its two consumers first split the chain that the
  /// one-hot sum folds, and the d256 step then wrote its [tokens, vocab]
  /// one-hot again (+4 MiB planned).
  void runOnOperation() override {
    for (bool broadcastAllowance : {false, true})
      if (failed(fuse(broadcastAllowance)))
        return signalPassFailure();
  }

  LogicalResult fuse(bool broadcastAllowance) {
    RewritePatternSet patterns(&getContext());
    linalg::ControlFusionFn control = [=](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && isa<linalg::GenericOp>(fused->getOwner()) &&
             (producer->hasOneUse() ||
              recomputedInEveryUse(producer, broadcastAllowance)) &&
             !narrows(producer);
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    zshard::populateFoldOneHotSumPatterns(patterns);
    if (broadcastAllowance)
      zshard::populateRecomputablePatterns(patterns);
    if (columnSums)
      zshard::populateFuseColumnSumPatterns(patterns);
    return applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};
} // namespace
