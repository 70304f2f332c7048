//===- AnnotatePhases.cpp - --zshard-annotate-phases ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/PhaseAnalysis.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_ANNOTATEPHASES
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {
struct AnnotatePhasesPass
    : public mlir::zshard::impl::AnnotatePhasesBase<AnnotatePhasesPass> {
  void runOnOperation() override {
    StepContract contract(getOperation());
    if (failed(contract.run()))
      return signalPassFailure();
    func::FuncOp step = contract.getStep();
    PhaseAnalysis phases(step);
    if (failed(phases.run())) {
      emitError(getReportLoc(step),
                "cannot derive phases: the step needs a loss result and "
                "a single-block body");
      return signalPassFailure();
    }
    Builder builder(&getContext());
    for (Operation &op : step.front().without_terminator())
      if (std::optional<Phase> phase = phases.getPhase(&op))
        op.setAttr(contract::kPhase,
                   PhaseAttr::get(builder.getContext(), *phase));
  }
};
} // namespace
