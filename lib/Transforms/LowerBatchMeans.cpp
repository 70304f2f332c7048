//===- LowerBatchMeans.cpp - --zshard-lower-batch-means -------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A zshard.batch_mean left after sharding is on a step of one slice: the
/// mean over the global batch is the input itself.
///
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Transforms/Passes.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_LOWERBATCHMEANS
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {
struct LowerBatchMeansPass
    : public mlir::zshard::impl::LowerBatchMeansBase<LowerBatchMeansPass> {
  void runOnOperation() override {
    SmallVector<BatchMeanOp> means;
    getOperation().walk([&](BatchMeanOp op) { means.push_back(op); });
    for (BatchMeanOp op : means) {
      op.getResult().replaceAllUsesWith(op.getInput());
      op.erase();
      ++numLowered;
    }
  }
};
} // namespace
