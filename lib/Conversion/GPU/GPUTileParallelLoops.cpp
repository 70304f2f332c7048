//===- GPUTileParallelLoops.cpp - --zshard-gpu-tile-parallel-loops --------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Collapses each outermost scf.parallel into one dimension and tiles it by
/// the block size, so that gpu-map-parallel-loops maps it to a
/// one-dimensional grid of blocks of at most `block-size` threads.
///
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_GPUTILEPARALLELLOOPS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

/// The number of iterations of `loop` (all its dimensions), if its bounds
/// are constants.
std::optional<int64_t> getStaticTripCount(scf::ParallelOp loop) {
  int64_t trips = 1;
  for (unsigned i = 0, e = loop.getNumLoops(); i < e; ++i) {
    std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()[i]);
    std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound()[i]);
    std::optional<int64_t> step = getConstantIntValue(loop.getStep()[i]);
    if (!lower || !upper || !step || *step <= 0)
      return std::nullopt;
    trips *= std::max<int64_t>(0, llvm::divideCeil(*upper - *lower, *step));
  }
  return trips;
}

struct GPUTileParallelLoopsPass
    : public mlir::zshard::impl::GPUTileParallelLoopsBase<
          GPUTileParallelLoopsPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

void GPUTileParallelLoopsPass::runOnOperation() {
  if (blockSize < 1 || blockSize > 1024) {
    getOperation().emitError("block-size must be within 1..1024, got ")
        << static_cast<int64_t>(blockSize);
    return signalPassFailure();
  }
  SmallVector<scf::ParallelOp> outermost;
  getOperation().walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>())
      outermost.push_back(loop);
  });
  IRRewriter rewriter(&getContext());
  for (scf::ParallelOp loop : outermost) {
    if (loop.getNumReductions() != 0) {
      loop.emitError("cannot map a parallel loop with reductions to a GPU");
      return signalPassFailure();
    }
    std::optional<int64_t> trips = getStaticTripCount(loop);
    if (loop.getNumLoops() > 1) {
      // Replaced by a new loop built right where it stood.
      Operation *before = loop->getPrevNode();
      Block *block = loop->getBlock();
      std::vector<unsigned> all;
      for (unsigned i = 0, e = loop.getNumLoops(); i < e; ++i)
        all.push_back(i);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
      Operation *next = before ? before->getNextNode() : &block->front();
      while (next && !isa<scf::ParallelOp>(next))
        next = next->getNextNode();
      if (!next) {
        getOperation().emitError("lost a parallel loop while collapsing it");
        return signalPassFailure();
      }
      loop = cast<scf::ParallelOp>(next);
    }
    int64_t tile = blockSize;
    if (trips)
      tile = std::clamp<int64_t>(*trips, 1, blockSize);
    scf::tileParallelLoop(loop, {tile}, /*noMinMaxBounds=*/true);
    ++numTiled;
  }
}
