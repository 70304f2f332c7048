//===- OptimizerAnalysis.cpp - per-parameter optimizer updates ------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/OptimizerAnalysis.h"
#include "zshard/Analysis/ModulePaths.h"

using namespace mlir;
using namespace mlir::zshard;

OptimizerAnalysis::OptimizerAnalysis(const StepContract &contract,
                                     const PhaseAnalysis &phases)
    : contract(contract), phases(phases) {}

const ParamUpdate *OptimizerAnalysis::lookup(unsigned paramIndex) const {
  for (const ParamUpdate &update : updates)
    if (update.paramIndex == paramIndex)
      return &update;
  return nullptr;
}

LogicalResult OptimizerAnalysis::run() {
  updates.clear();
  func::FuncOp step = contract.getStep();
  auto ret = cast<func::ReturnOp>(step.front().getTerminator());
  for (const StepArgument *param : contract.getArguments(ArgRole::Param)) {
    auto fail = [&](const Twine &why) {
      return emitError(getReportLoc(step))
             << "cannot shard the optimizer update of '" << param->name
             << "': " << why;
    };
    const StepResult *out = nullptr;
    for (const StepResult &result : contract.getResults())
      if (result.role == ResultRole::ParamOut && result.name == param->name)
        out = &result;
    if (!out)
      return fail("it has no param_out");
    Value updated = ret.getOperand(out->index);
    auto op = updated.getDefiningOp<AdamWOp>();
    if (!op || updated != op.getNewParam())
      return fail("its param_out is not the new_param of a zshard.adamw");
    if (phases.getPhase(op) != Phase::Optimizer)
      return fail("its zshard.adamw is not in the optimizer phase");
    if (op.getParam() != step.getArgument(param->index))
      return fail("its zshard.adamw does not update the parameter argument");

    // The state operands are the parameter's own state arguments.
    SmallVector<std::pair<StringRef, Value>> states = {
        {"exp_avg", op.getExpAvg()}, {"exp_avg_sq", op.getExpAvgSq()}};
    if (Value master = op.getMaster())
      states.push_back({"master", master});
    for (auto [what, value] : states) {
      auto arg = dyn_cast<BlockArgument>(value);
      if (!arg || arg.getOwner() != &step.front())
        return fail("its " + what + " is not an argument of the step");
      const StepArgument &info = contract.getArguments()[arg.getArgNumber()];
      if (info.role != ArgRole::OptState || info.param != param->name)
        return fail("its " + what + " is argument '" + info.name +
                    "', which is not its own optimizer state");
    }
    Value grad = op.getGrad();
    if (!grad.getDefiningOp() ||
        !step.front().findAncestorOpInBlock(*grad.getDefiningOp()))
      return fail("its gradient is not computed by the step");

    ParamUpdate update;
    update.paramIndex = param->index;
    update.op = op;
    for (OpResult result : op->getResults()) {
      std::optional<unsigned> index;
      for (OpOperand &use : result.getUses())
        if (use.getOwner() == ret)
          index = use.getOperandNumber();
      if (!index || !result.hasOneUse())
        return fail("result #" + Twine(result.getResultNumber()) +
                    " of its update is not returned exactly once");
      update.resultIndices.push_back(*index);
    }
    updates.push_back(update);
  }
  return success();
}
