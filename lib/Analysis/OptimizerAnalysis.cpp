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
    auto op = updated.getDefiningOp<linalg::GenericOp>();
    if (!op || op.getNumParallelLoops() != op.getNumLoops())
      return fail("its param_out is not made by an elementwise linalg.generic");
    if (phases.getPhase(op) != Phase::Optimizer)
      return fail("the op making its param_out is not in the optimizer phase");

    ParamUpdate update;
    update.paramIndex = param->index;
    update.op = op;
    std::optional<unsigned> grad;
    Value paramValue = step.getArgument(param->index);
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(input->get().getType());
      if (type && type.getRank() == 0)
        continue; // a scalar: lr, bias corrections, ...
      AffineMap map = op.getMatchingIndexingMap(input);
      if (!map.isIdentity() || !type ||
          type.getShape() != param->type.getShape())
        return fail("operand #" + Twine(input->getOperandNumber()) +
                    " of its update is neither a scalar nor shaped like the "
                    "parameter");
      if (auto arg = dyn_cast<BlockArgument>(input->get())) {
        const StepArgument &info = contract.getArguments()[arg.getArgNumber()];
        bool own =
            input->get() == paramValue ||
            (info.role == ArgRole::OptState && info.param == param->name);
        if (!own)
          return fail("its update reads argument '" + info.name +
                      "', which is not its own state");
        continue;
      }
      if (grad)
        return fail("its update reads two computed tensors; expected one "
                    "gradient");
      grad = input->getOperandNumber();
    }
    if (!grad)
      return fail("its update reads no gradient");
    update.gradOperand = *grad;
    for (OpOperand &init : op.getDpsInitsMutable())
      if (op.payloadUsesValueFromOperand(&init))
        return fail("its update reads its output tensors");
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
