//===- PhaseAnalysis.cpp - forward, backward, optimizer -------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/PhaseAnalysis.h"

#include "mlir/IR/Builders.h"
#include "zshard/Analysis/StepContract.h"

using namespace mlir;
using namespace mlir::zshard;

PhaseAnalysis::PhaseAnalysis(func::FuncOp step) : step(step) {}

/// Values `op` reads that are defined outside it: its operands and what its
/// regions capture from above.
static SmallVector<Value> getExternalInputs(Operation *op) {
  SmallVector<Value> inputs(op->getOperands());
  op->walk([&](Operation *nested) {
    if (nested == op)
      return;
    for (Value operand : nested->getOperands()) {
      Region *defRegion = operand.getParentRegion();
      if (!op->isProperAncestor(defRegion->getParentOp()) &&
          defRegion->getParentOp() != op)
        inputs.push_back(operand);
    }
  });
  return inputs;
}

LogicalResult PhaseAnalysis::run() {
  phases.clear();
  forwardStateDependence.clear();
  if (!step || !llvm::hasSingleElement(step.getBody()))
    return failure();
  Block &body = step.front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return failure();

  // The loss result and the arguments that carry state or hyper-parameters.
  std::optional<unsigned> loss;
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i)
    if (readResultRole(step, i) == ResultRole::Loss)
      loss = i;
  if (!loss || *loss >= ret.getNumOperands())
    return failure();
  llvm::SmallDenseSet<unsigned> stateArgs, batchArgs;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
    if (std::optional<ArgRole> role = readArgRole(step, i)) {
      if (*role == ArgRole::OptState || *role == ArgRole::OptStateShard ||
          *role == ArgRole::Hyper)
        stateArgs.insert(i);
      if (*role == ArgRole::Batch)
        batchArgs.insert(i);
    }

  llvm::DenseMap<Operation *, SmallVector<Value>> inputs;
  for (Operation &op : body.without_terminator())
    inputs[&op] = getExternalInputs(&op);

  // Forward: the backward slice of the loss.
  llvm::SmallPtrSet<Operation *, 32> forward;
  SmallVector<Operation *> worklist;
  if (Operation *def = ret.getOperand(*loss).getDefiningOp())
    worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (op->getBlock() != &body || !forward.insert(op).second)
      continue;
    for (Value input : inputs[op])
      if (Operation *def = input.getDefiningOp())
        worklist.push_back(def);
  }

  // Dependence on state or hyper-parameters, in program order. Remember the
  // argument each op depends on, for diagnostics.
  llvm::DenseMap<Operation *, unsigned> stateful;
  for (Operation &op : body.without_terminator()) {
    for (Value input : inputs[&op]) {
      std::optional<unsigned> source;
      if (auto arg = dyn_cast<BlockArgument>(input)) {
        if (arg.getOwner() == &body && stateArgs.contains(arg.getArgNumber()))
          source = arg.getArgNumber();
      } else if (auto it = stateful.find(input.getDefiningOp());
                 it != stateful.end()) {
        source = it->second;
      }
      if (source) {
        stateful[&op] = *source;
        break;
      }
    }
  }

  // Dependence on the batch (through any chain of ops): what the gradients
  // are made of. Ops that read only parameters and constants (a packed copy
  // of the parameters, say) are not backward by themselves.
  llvm::SmallPtrSet<Operation *, 32> dataDependent;
  for (Operation &op : body.without_terminator())
    for (Value input : inputs[&op]) {
      auto arg = dyn_cast<BlockArgument>(input);
      Operation *def = input.getDefiningOp();
      if ((arg && arg.getOwner() == &body &&
           batchArgs.contains(arg.getArgNumber())) ||
          (def && dataDependent.contains(def))) {
        dataDependent.insert(&op);
        break;
      }
    }

  // Classify ops with inputs; ops without inputs, and ops that read only
  // parameters and constants, wait for their users.
  SmallVector<Operation *> sources;
  for (Operation &op : body.without_terminator()) {
    if (forward.contains(&op)) {
      phases[&op] = Phase::Forward;
      if (auto it = stateful.find(&op); it != stateful.end())
        forwardStateDependence[&op] = it->second;
    } else if (inputs[&op].empty() ||
               (!stateful.count(&op) && !dataDependent.contains(&op))) {
      sources.push_back(&op);
    } else {
      phases[&op] = stateful.count(&op) ? Phase::Optimizer : Phase::Backward;
    }
  }
  // Users come later in the block, so visit sources last to first: a source
  // feeding another source sees its user's phase already settled.
  for (Operation *op : llvm::reverse(sources)) {
    std::optional<Phase> earliest;
    for (Operation *user : op->getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      auto it = top ? phases.find(top) : phases.end();
      if (it != phases.end() && (!earliest || it->second < *earliest))
        earliest = it->second;
    }
    phases[op] = earliest.value_or(Phase::Backward);
  }
  return success();
}

std::optional<Phase> PhaseAnalysis::getPhase(Operation *op) const {
  if (!step || !op)
    return std::nullopt;
  Operation *top =
      const_cast<func::FuncOp &>(step).getBody().findAncestorOpInRegion(*op);
  if (!top)
    return std::nullopt;
  auto it = phases.find(top);
  if (it == phases.end())
    return std::nullopt;
  return it->second;
}

std::optional<unsigned>
PhaseAnalysis::getForwardStateDependence(Operation *op) const {
  auto it = forwardStateDependence.find(op);
  if (it == forwardStateDependence.end())
    return std::nullopt;
  return it->second;
}
