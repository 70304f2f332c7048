//===- VerifyContract.cpp - --zshard-verify-contract ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Checks a module against docs/contract.md. The signature rules live in
/// StepContract, the phase rules in PhaseAnalysis; this pass adds the rules
/// on the body (dialects, module paths) and reports them all.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/Microbatches.h"
#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/PhaseAnalysis.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_VERIFYCONTRACT
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// The dialects a step may use: the contract's, and zshard once the step is
/// sharded.
bool isContractDialect(StringRef ns) {
  static const llvm::StringSet<> allowed = {
      "func", "linalg", "tensor", "arith", "math", "scf", "zshard", "shard"};
  return allowed.contains(ns);
}

struct VerifyContractPass
    : public mlir::zshard::impl::VerifyContractBase<VerifyContractPass> {
  void runOnOperation() override;
  LogicalResult verifyBody(func::FuncOp step);
  LogicalResult verifyPhases(func::FuncOp step, const StepContract &contract);
};

} // namespace

LogicalResult VerifyContractPass::verifyBody(func::FuncOp step) {
  if (!llvm::hasSingleElement(step.getBody()))
    return emitError(getReportLoc(step),
                     "the step body must be a single block (no "
                     "top-level control flow)");
  bool ok = true;
  step.getBody().walk([&](Operation *op) {
    StringRef ns = op->getName().getDialectNamespace();
    if (!isContractDialect(ns)) {
      emitError(getReportLoc(op))
          << "op '" << op->getName()
          << "' is outside the contract's dialects (func, "
             "linalg, tensor, arith, math, scf; zshard once sharded)";
      ok = false;
    }
  });
  // The dialect verified the module paths' syntax (zshard.path).
  numOps += std::distance(step.front().begin(), step.front().end());
  if (failed(verifyMicrobatches(step)))
    ok = false;
  return success(ok);
}

LogicalResult VerifyContractPass::verifyPhases(func::FuncOp step,
                                               const StepContract &contract) {
  PhaseAnalysis phases(step);
  if (failed(phases.run()))
    return emitError(getReportLoc(step),
                     "cannot derive phases: the step needs a loss "
                     "result and a single-block body");
  bool ok = true;
  bool reportedStateInLoss = false;
  for (Operation &op : step.front().without_terminator()) {
    std::optional<Phase> derived = phases.getPhase(&op);
    if (!derived)
      continue;
    // Report where the dependence enters the forward, not every op after it.
    std::optional<unsigned> arg = phases.getForwardStateDependence(&op);
    if (arg && !reportedStateInLoss) {
      reportedStateInLoss = true;
      const StepArgument &source = contract.getArguments()[*arg];
      emitError(getReportLoc(&op))
          << "the loss depends on "
          << (source.role == ArgRole::Hyper ? "hyper-parameter"
                                            : "optimizer state")
          << " '" << source.name << "' (argument #" << *arg
          << ") through this op; the loss must be that of the "
             "parameters going in";
      ok = false;
    }
    Attribute explicitPhase = op.getAttr(contract::kPhase);
    if (!explicitPhase)
      continue;
    // The dialect verified that it is a #zshard.phase.
    Phase stated = cast<PhaseAttr>(explicitPhase).getValue();
    if (stated != *derived) {
      emitError(getReportLoc(&op))
          << "op '" << op.getName() << "' is marked '" << stringifyPhase(stated)
          << "' but derives as '" << stringifyPhase(*derived) << "'";
      ok = false;
    }
  }
  return success(ok);
}

void VerifyContractPass::runOnOperation() {
  StepContract contract(getOperation());
  bool signatureOk = succeeded(contract.run());
  func::FuncOp step = contract.getStep();
  if (!step || step.isExternal())
    return signalPassFailure();
  for (const StepArgument &argument : contract.getArguments()) {
    if (argument.role != ArgRole::Param)
      continue;
    ++numParams;
    numParamElements += argument.type.getNumElements();
  }
  bool bodyOk = succeeded(verifyBody(step));
  // Phases need a loss and a single block; only check them on a sound step.
  bool phasesOk =
      signatureOk && bodyOk && succeeded(verifyPhases(step, contract));
  if (!signatureOk || !bodyOk || !phasesOk)
    signalPassFailure();
}
