//===- Accumulate.cpp - --zshard-accumulate -------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Gradient accumulation as a rewrite of the unsharded step: the forward and
/// backward run once per microbatch (unrolled copies, each on its slice of
/// the batch), the losses and gradients are averaged over the microbatches,
/// and the optimizer runs once on the averages.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/Microbatches.h"
#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/OptimizerAnalysis.h"
#include "zshard/Analysis/PhaseAnalysis.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_ACCUMULATE
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

struct AccumulatePass
    : public mlir::zshard::impl::AccumulateBase<AccumulatePass> {
  using AccumulateBase::AccumulateBase;
  void runOnOperation() override;
};

/// What `op` reads from the block it sits in: its operands and the values
/// its regions use from above.
SmallVector<Value> readsOf(Operation *op) {
  llvm::SetVector<Value> values(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), values);
  return values.takeVector();
}

/// `acc + next` elementwise, written into `acc` (its last use), times
/// `scale` when given. Shapes and element types are those of `acc`.
Value addInto(OpBuilder &builder, Location loc, Value acc, Value next,
              std::optional<double> scale) {
  auto type = cast<RankedTensorType>(acc.getType());
  MLIRContext *ctx = builder.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(), ctx);
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{type}, ValueRange{next}, ValueRange{acc},
      ArrayRef<AffineMap>{id, id}, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value sum = arith::AddFOp::create(b, l, args[1], args[0]);
        if (scale) {
          Value factor = arith::ConstantOp::create(
              b, l, b.getFloatAttr(type.getElementType(), *scale));
          sum = arith::MulFOp::create(b, l, sum, factor);
        }
        linalg::YieldOp::create(b, l, sum);
      });
  return generic.getResult(0);
}

/// For each zshard.batch_mean among `ordered` (the ops copied per
/// microbatch): copies of what its input is made of, one per microbatch
/// (`sliceBatches` maps the batch arguments to microbatch i's rows), their
/// mean, and a batch_mean of that, all at the builder's point before the
/// first microbatch; `means` maps the op's result to the new one.
template <typename SliceFn, typename TagFn>
LogicalResult
meanOverMicrobatches(OpBuilder &builder, ArrayRef<Operation *> ordered,
                     ArrayRef<const StepArgument *> batches, int64_t count,
                     SliceFn sliceBatches, TagFn tag, IRMapping &means) {
  Block *block = ordered.front()->getBlock();
  for (Operation *op : ordered) {
    auto mean = dyn_cast<BatchMeanOp>(op);
    if (!mean)
      continue;
    // What the input is made of, in block order.
    llvm::SmallPtrSet<Operation *, 16> slice;
    SmallVector<Value> worklist{mean.getInput()};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (arg.getOwner() != block)
          continue;
        if (llvm::none_of(batches, [&](const StepArgument *batch) {
              return batch->index == arg.getArgNumber();
            }))
          return emitError(getReportLoc(mean))
                 << "zshard-accumulate: this zshard.batch_mean reads "
                    "argument #"
                 << arg.getArgNumber()
                 << ", which is not a batch argument; a batch mean's input "
                    "must be made of the batch and constants only";
        continue;
      }
      Operation *def = value.getDefiningOp();
      if (def->getBlock() != block || !slice.insert(def).second)
        continue;
      if (isa<BatchMeanOp>(def))
        return emitError(getReportLoc(mean))
               << "zshard-accumulate: the input of this zshard.batch_mean "
                  "reads another batch mean";
      llvm::append_range(worklist, readsOf(def));
    }
    SmallVector<Operation *> inOrder;
    for (Operation &candidate : *block)
      if (slice.contains(&candidate))
        inOrder.push_back(&candidate);
    Value total;
    for (int64_t i = 0; i < count; ++i) {
      IRMapping mapping;
      sliceBatches(mapping, i);
      for (Operation *def : inOrder)
        tag(builder.clone(*def, mapping), i);
      Value value = mapping.lookupOrDefault(mean.getInput());
      if (i == 0) {
        total = value;
        continue;
      }
      total = addInto(builder, mean.getLoc(), total, value,
                      i + 1 == count ? std::optional<double>(1.0 / count)
                                     : std::nullopt);
    }
    auto combined = BatchMeanOp::create(builder, mean.getLoc(), total);
    means.map(mean.getResult(), combined.getResult());
  }
  return success();
}

} // namespace

void AccumulatePass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fail = [&](Location loc, const Twine &message) {
    emitError(loc) << "zshard-accumulate: " << message;
    signalPassFailure();
  };
  if (microbatches < 1)
    return fail(getReportLoc(module),
                "microbatches must be at least 1, got " + Twine(microbatches));
  StepContract contract(module);
  if (failed(contract.run()))
    return signalPassFailure();
  func::FuncOp step = contract.getStep();
  for (UnitOp unit : module.getOps<UnitOp>())
    return fail(getReportLoc(step),
                "the step is already sharded (it declares zshard.unit @" +
                    unit.getSymName() +
                    "); accumulate the unsharded step, before "
                    "zshard-form-units");
  for (const StepArgument *shard : contract.getArguments(ArgRole::ParamShard))
    return fail(getReportLoc(step),
                "the step is already sharded (argument '" + shard->name +
                    "' is a parameter shard); accumulate the unsharded step, "
                    "before zshard-form-units");
  if (step->hasAttr(contract::kMicrobatches))
    return fail(getReportLoc(step), "the step already accumulates " +
                                        Twine(getNumMicrobatches(step)) +
                                        " microbatches");
  if (microbatches == 1)
    return;

  SmallVector<const StepArgument *> batches =
      contract.getArguments(ArgRole::Batch);
  if (batches.empty())
    return fail(getReportLoc(step),
                "the step has no batch argument to split into microbatches");
  for (const StepArgument *batch : batches)
    if (batch->type.getRank() == 0)
      return fail(getReportLoc(step),
                  "batch argument '" + batch->name +
                      "' is a scalar; microbatches are rows of the first "
                      "dimension of every batch argument");

  PhaseAnalysis phases(step);
  if (failed(phases.run()))
    return fail(getReportLoc(step), "cannot derive the phases of the step");
  OptimizerAnalysis optimizer(contract, phases);
  if (failed(optimizer.run()))
    return signalPassFailure();

  // What is averaged over the microbatches: the loss and every gradient.
  Block &block = step.front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  llvm::SetVector<Value> roots;
  for (const StepResult &result : contract.getResults())
    if (result.role == ResultRole::Loss)
      roots.insert(ret.getOperand(result.index));
  for (const StepArgument *param : contract.getArguments(ArgRole::Param))
    roots.insert(AdamWOp(optimizer.lookup(param->index)->op).getGrad());
  for (Value root : roots)
    if (!isa<FloatType>(
            cast<RankedTensorType>(root.getType()).getElementType()))
      return fail(getReportLoc(step),
                  "the loss and the gradients must be floating point");

  // The ops they depend on: one copy of these per microbatch.
  llvm::SmallPtrSet<Operation *, 32> perMicrobatch;
  SmallVector<Value> worklist(roots.begin(), roots.end());
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || !perMicrobatch.insert(def).second)
      continue;
    llvm::append_range(worklist, readsOf(def));
  }
  SmallVector<Operation *> ordered;
  for (Operation &op : block.without_terminator())
    if (perMicrobatch.contains(&op))
      ordered.push_back(&op);
  if (ordered.empty())
    return fail(getReportLoc(step),
                "neither the loss nor any gradient is computed in the step");

  // Only the copies may read the batch, and only the loss and the
  // gradients leave them.
  auto isOutside = [&](OpOperand &use) {
    Operation *top = block.findAncestorOpInBlock(*use.getOwner());
    return top && !perMicrobatch.contains(top);
  };
  for (const StepArgument *batch : batches)
    for (OpOperand &use : block.getArgument(batch->index).getUses())
      if (isOutside(use))
        return fail(getReportLoc(use.getOwner()),
                    "batch argument '" + batch->name +
                        "' is read here, outside what the loss and the "
                        "gradients are made of; it cannot be split into "
                        "microbatches");
  for (Operation *op : ordered)
    for (Value result : op->getResults())
      if (!roots.contains(result))
        for (OpOperand &use : result.getUses())
          if (isOutside(use))
            return fail(getReportLoc(use.getOwner()),
                        "this op reads a value of the forward or backward "
                        "other than the loss and the gradients; only those "
                        "are averaged over microbatches");

  // The batch arguments take K times their rows.
  MLIRContext *ctx = &getContext();
  int64_t count = microbatches;
  for (const StepArgument *batch : batches) {
    SmallVector<int64_t> shape(batch->type.getShape());
    shape[0] *= count;
    block.getArgument(batch->index)
        .setType(RankedTensorType::get(shape, batch->type.getElementType()));
  }

  // The copies, in block order, each followed by the running sums.
  OpBuilder builder(ordered.front());
  Location rootLoc = getStepLoc(step);
  auto tag = [&](Operation *op, int64_t i) {
    op->setAttr(contract::kMicrobatch,
                IntegerAttr::get(IntegerType::get(ctx, 64), i));
  };
  // Microbatch i's rows of every batch argument, as `mapping`'s values.
  auto sliceBatches = [&](IRMapping &mapping, int64_t i) {
    for (const StepArgument *batch : batches) {
      ArrayRef<int64_t> rows = batch->type.getShape();
      SmallVector<OpFoldResult> offsets(rows.size(), builder.getIndexAttr(0));
      offsets[0] = builder.getIndexAttr(i * rows[0]);
      SmallVector<OpFoldResult> sizes,
          strides(rows.size(), builder.getIndexAttr(1));
      for (int64_t extent : rows)
        sizes.push_back(builder.getIndexAttr(extent));
      Value arg = block.getArgument(batch->index);
      auto slice = tensor::ExtractSliceOp::create(builder, rootLoc, batch->type,
                                                  arg, offsets, sizes, strides);
      tag(slice, i);
      mapping.map(arg, slice.getResult());
    }
  };
  // Batch means are over every microbatch: each one's input is computed
  // for all microbatches before the first runs, and the copies read the
  // mean of those.
  IRMapping means;
  if (failed(meanOverMicrobatches(builder, ordered, batches, count,
                                  sliceBatches, tag, means)))
    return signalPassFailure();
  llvm::DenseMap<Value, Value> sums;
  for (int64_t i = 0; i < count; ++i) {
    IRMapping mapping;
    sliceBatches(mapping, i);
    for (auto [from, to] : means.getValueMap())
      mapping.map(from, to);
    bool last = i + 1 == count;
    for (Operation *op : ordered) {
      if (isa<BatchMeanOp>(op))
        continue;
      Operation *copy = builder.clone(*op, mapping);
      tag(copy, i);
      numCloned += i > 0;
      for (Value result : op->getResults()) {
        if (!roots.contains(result))
          continue;
        Value value = mapping.lookup(result);
        if (i == 0) {
          sums[result] = value;
          continue;
        }
        sums[result] = addInto(builder, op->getLoc(), sums[result], value,
                               last ? std::optional<double>(1.0 / double(count))
                                    : std::nullopt);
        tag(sums[result].getDefiningOp(), i);
        numAccumulated += last;
      }
    }
  }
  for (Value root : roots)
    root.replaceUsesWithIf(sums[root], isOutside);
  for (Operation *op : llvm::reverse(ordered))
    op->erase();
  // Copies only a batch mean's input read (its own count, say) are dead.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (op.hasAttr(contract::kMicrobatch) && isOpTriviallyDead(&op))
      op.erase();

  step.setFunctionType(
      FunctionType::get(ctx, block.getArgumentTypes(), step.getResultTypes()));
  step->setAttr(contract::kMicrobatches,
                IntegerAttr::get(IntegerType::get(ctx, 64), count));
}
