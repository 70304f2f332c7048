//===- ExtractEval.cpp - --zshard-extract-eval ----------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Rewrites a training step into the forward-only step that computes its
/// loss (zshard.eval): the step keeps its arguments, returns the loss alone,
/// and loses every top-level op the loss does not depend on. Liveness is
/// decided by data flow, not by side effects, because the collectives
/// (modelled as effects on the communication resource) would otherwise all
/// survive.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_EXTRACTEVAL
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// The ops of `block` that `root` depends on, `root` included: the
/// top-level ancestors of the producers of every operand of `root` and of
/// the ops nested in it, transitively.
llvm::DenseSet<Operation *> findNeeded(Block &block, Operation *root) {
  llvm::DenseSet<Operation *> needed;
  SmallVector<Operation *> worklist = {root};
  needed.insert(root);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer)
          continue;
        Operation *top = block.findAncestorOpInBlock(*producer);
        if (top && needed.insert(top).second)
          worklist.push_back(top);
      }
    });
  }
  return needed;
}

/// Whether `op`'s result may alias its tensor operand once bufferized (a
/// slice or reshape of it): its uses are uses of the buffer.
bool isView(Operation *op) {
  return isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::CastOp, tensor::ReshapeOp>(op);
}

/// Moves `release` to right after the last op of its block that uses its
/// buffer or a view of it (or produces it).
void moveReleaseUp(ReleaseOp release) {
  Block *block = release->getBlock();
  Value buffer = release.getBuffer();
  Operation *producer = buffer.getDefiningOp();
  Operation *last =
      producer ? block->findAncestorOpInBlock(*producer) : nullptr;
  if (!last)
    return;
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == release)
        continue;
      if (isView(user))
        worklist.append(user->result_begin(), user->result_end());
      Operation *top = block->findAncestorOpInBlock(*user);
      if (top && last->isBeforeInBlock(top))
        last = top;
    }
  }
  if (last->isBeforeInBlock(release))
    release->moveAfter(last);
}

struct ExtractEvalPass
    : public mlir::zshard::impl::ExtractEvalBase<ExtractEvalPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step;
    module.walk([&](func::FuncOp func) {
      if (func->hasAttr(contract::kStep) && !step)
        step = func;
    });
    if (step && step->hasAttr(contract::kEval))
      return;
    if (step && !step.isExternal()) {
      bool hasLoss = false;
      for (unsigned i = 0; i < step.getNumResults(); ++i)
        hasLoss |= readResultRole(step, i) == ResultRole::Loss;
      if (!hasLoss) {
        emitError(getReportLoc(step),
                  "zshard-extract-eval: the step has no loss result, so it "
                  "has nothing to evaluate");
        return signalPassFailure();
      }
    }
    StepContract contract(module);
    if (failed(contract.run()))
      return signalPassFailure();
    step = contract.getStep();
    if (!step.getBody().hasOneBlock()) {
      emitError(getReportLoc(step), "zshard-extract-eval: the step must have "
                                    "a single-block body");
      return signalPassFailure();
    }
    unsigned lossIndex = *contract.getLossIndex();
    Block &body = step.front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());

    // The step now returns the loss alone.
    Value loss = ret.getOperand(lossIndex);
    DictionaryAttr lossAttrs = step.getResultAttrDict(lossIndex);
    ret->setOperands(loss);
    step.setFunctionType(FunctionType::get(
        &getContext(), step.getArgumentTypes(), {loss.getType()}));
    step.setAllResultAttrs(ArrayRef<DictionaryAttr>{lossAttrs});
    step->setAttr(contract::kEval, UnitAttr::get(&getContext()));
    // An ABI record of the training step (zshard-record-abi) now describes
    // the eval entry: the same arguments, the loss alone.
    if (auto abi = module->getAttrOfType<StepABIAttr>(contract::kABI);
        abi && abi.getStep() == step.getSymName() &&
        lossIndex < abi.getResults().size())
      module->setAttr(contract::kABI,
                      abi.withResults({abi.getResults()[lossIndex]}));

    llvm::DenseSet<Operation *> needed = findNeeded(body, ret);
    // A release of a buffer the loss still needs stays with it.
    for (Operation &op : body)
      if (auto release = dyn_cast<ReleaseOp>(&op))
        if (Operation *producer = release.getBuffer().getDefiningOp())
          if (needed.contains(body.findAncestorOpInBlock(*producer)))
            needed.insert(release);

    SmallVector<Operation *> dead;
    for (Operation &op : body)
      if (!needed.contains(&op))
        dead.push_back(&op);
    for (Operation *op : llvm::reverse(dead)) {
      if (isa<CollectiveOpInterface, WaitOp>(op))
        ++numCollectivesErased;
      op->dropAllUses();
      op->erase();
      ++numErased;
    }
    SmallVector<ReleaseOp> releases;
    for (Operation &op : body) {
      if (isa<CollectiveOpInterface, WaitOp>(&op))
        ++numCollectivesKept;
      if (auto release = dyn_cast<ReleaseOp>(&op))
        releases.push_back(release);
    }
    for (ReleaseOp release : releases)
      moveReleaseUp(release);
  }
};

} // namespace
