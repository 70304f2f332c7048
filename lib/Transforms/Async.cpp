//===- Async.cpp - --zshard-async -----------------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Transforms/Passes.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_ASYNC
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

struct AsyncPass : public mlir::zshard::impl::AsyncBase<AsyncPass> {
  void runOnOperation() override {
    SmallVector<CollectiveOpInterface> collectives;
    getOperation().walk([&](CollectiveOpInterface op) {
      if (!op.isAsync())
        collectives.push_back(op);
    });
    for (CollectiveOpInterface op : collectives) {
      OpBuilder builder(op);
      Location loc = op.getLoc();
      RankedTensorType result = op.getResultTensorType();
      auto token = TokenType::get(&getContext(), result);
      auto axes = builder.getDenseI64ArrayAttr(op.getGridAxes());
      Value started;
      if (auto gather = dyn_cast<AllGatherOp>(*op)) {
        started = AllGatherStartOp::create(builder, loc, token,
                                           gather.getInput(), op.getGridAttr(),
                                           axes, op.getUnitAttr());
      } else if (auto scatter = dyn_cast<ReduceScatterOp>(*op)) {
        started = ReduceScatterStartOp::create(
            builder, loc, token, scatter.getReduceAttr(), scatter.getInput(),
            op.getGridAttr(), axes, op.getUnitAttr());
      } else {
        auto reduce = cast<AllReduceOp>(*op);
        started = AllReduceStartOp::create(
            builder, loc, token, reduce.getReduceAttr(), reduce.getInput(),
            op.getGridAttr(), axes, op.getUnitAttr());
      }
      Value waited = WaitOp::create(builder, loc, result, started);
      op->getResult(0).replaceAllUsesWith(waited);
      op->erase();
      ++numSplit;
    }
  }
};

} // namespace
