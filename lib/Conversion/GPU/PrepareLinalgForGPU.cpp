//===- PrepareLinalgForGPU.cpp - --zshard-prepare-linalg-for-gpu ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Shapes the linalg ops of a bufferized step so that
/// convert-linalg-to-parallel-loops leaves every memory access inside one
/// outermost scf.parallel: copies become linalg.copy, reductions outside
/// parallel dimensions are interchanged inwards, and ops without parallel
/// dimensions are wrapped in a one-iteration scf.parallel.
///
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_PREPARELINALGFORGPU
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

/// The loop order that puts the parallel dimensions of `op` first (each
/// entry the old position of the new loop), or an empty vector when they
/// already come first.
SmallVector<unsigned> getParallelFirstOrder(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (auto [i, type] : llvm::enumerate(iterators))
    if (type == utils::IteratorType::parallel)
      order.push_back(i);
  for (auto [i, type] : llvm::enumerate(iterators))
    if (type != utils::IteratorType::parallel)
      order.push_back(i);
  bool identity = llvm::all_of(llvm::enumerate(order), [](auto entry) {
    return entry.index() == entry.value();
  });
  return identity ? SmallVector<unsigned>() : order;
}

struct PrepareLinalgForGPUPass
    : public mlir::zshard::impl::PrepareLinalgForGPUBase<
          PrepareLinalgForGPUPass> {
  void runOnOperation() override;
  /// Moves `op` into a one-iteration scf.parallel.
  void wrapInOneThread(IRRewriter &rewriter, Operation *op);
};

} // namespace

void PrepareLinalgForGPUPass::runOnOperation() {
  IRRewriter rewriter(&getContext());

  SmallVector<memref::CopyOp> copies;
  getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                copy.getTarget());
    ++numCopies;
  }

  SmallVector<linalg::LinalgOp> ops;
  getOperation().walk([&](linalg::LinalgOp op) {
    if (op.hasPureBufferSemantics())
      ops.push_back(op);
  });
  for (linalg::LinalgOp op : ops) {
    SmallVector<unsigned> order = getParallelFirstOrder(op);
    if (!order.empty() && op.getNumParallelLoops() > 0) {
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized)) {
          op.emitError("cannot generalize this op to move its parallel "
                       "dimensions outside its reductions");
          return signalPassFailure();
        }
        generic = *generalized;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
        generic.emitError("cannot move the parallel dimensions of this op "
                          "outside its reductions");
        return signalPassFailure();
      }
      ++numInterchanged;
      continue;
    }
    if (op.getNumParallelLoops() > 0)
      continue;
    wrapInOneThread(rewriter, op);
  }
  // A scatter-add of one column: its one-iteration scf.forall was folded
  // into a host loop.
  SmallVector<scf::ForOp> loops;
  for (Operation &op : getOperation().getBody().getOps())
    if (auto loop = dyn_cast<scf::ForOp>(op))
      loops.push_back(loop);
  for (scf::ForOp loop : loops)
    wrapInOneThread(rewriter, loop);
}

void PrepareLinalgForGPUPass::wrapInOneThread(IRRewriter &rewriter,
                                              Operation *op) {
  // Nothing to spread over threads: one iteration of a parallel loop, so
  // that the op still becomes a (one-thread) kernel.
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{one}, ValueRange{one});
  rewriter.moveOpBefore(op, loop.getBody()->getTerminator());
  ++numWrapped;
}
