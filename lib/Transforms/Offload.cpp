//===- Offload.cpp - --zshard-offload -------------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/StepContract.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_OFFLOAD
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {
struct OffloadPass : public mlir::zshard::impl::OffloadBase<OffloadPass> {
  void runOnOperation() override {
    StepContract contract(getOperation());
    if (failed(contract.run()))
      return signalPassFailure();
    func::FuncOp step = contract.getStep();
    auto host = ArgPlacementAttr::get(&getContext(), Placement::Host);
    for (const StepArgument &arg : contract.getArguments())
      if (arg.role == ArgRole::OptState || arg.role == ArgRole::OptStateShard) {
        step.setArgAttr(arg.index, contract::kPlacement, host);
        ++numOffloaded;
      }
  }
};
} // namespace
