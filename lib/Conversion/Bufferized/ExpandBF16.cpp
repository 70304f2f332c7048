//===- ExpandBF16.cpp - --zshard-expand-bf16 ------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// f32 <-> bf16 conversions as integer arithmetic, so that CPU code needs no
// compiler-runtime helper (`__truncsfbf2`) on a CPU without AVX512-BF16.
//
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_EXPANDBF16
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {
struct ExpandBF16Pass
    : public mlir::zshard::impl::ExpandBF16Base<ExpandBF16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
