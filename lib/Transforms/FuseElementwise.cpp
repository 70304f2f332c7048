//===- FuseElementwise.cpp - --zshard-fuse-elementwise --------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
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

struct FuseElementwisePass
    : public mlir::zshard::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && isa<linalg::GenericOp>(fused->getOwner()) &&
             producer->hasOneUse() && !narrows(producer);
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
