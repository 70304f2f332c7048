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
struct FuseElementwisePass
    : public mlir::zshard::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && isa<linalg::GenericOp>(fused->getOwner()) &&
             producer->hasOneUse();
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
