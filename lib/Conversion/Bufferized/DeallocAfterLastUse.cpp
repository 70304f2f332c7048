//===- DeallocAfterLastUse.cpp - --zshard-dealloc-after-last-use ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "Bufferized/BufferUses.h"

#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_DEALLOCAFTERLASTUSE
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// How `func`'s buffers get freed.
enum class Freeing {
  /// It frees them already (deallocations exist): move those.
  Placed,
  /// One block, every allocation at its top level, none returned: insert a
  /// deallocation after each last use.
  StraightLine,
  /// Anything else: the upstream deallocation pipeline first.
  Upstream
};

Freeing classify(func::FuncOp func) {
  if (func.isExternal())
    return Freeing::Placed;
  bool hasDeallocs = false, nested = false;
  func.walk([&](Operation *op) {
    hasDeallocs |= isa<memref::DeallocOp>(op);
    nested |= isa<memref::AllocOp>(op) &&
              op->getParentRegion() != &func.getBody();
  });
  if (hasDeallocs)
    return Freeing::Placed;
  if (nested || !llvm::hasSingleElement(func.getBody()))
    return Freeing::Upstream;
  for (Value operand : func.front().getTerminator()->getOperands())
    if (isa<BaseMemRefType>(operand.getType()))
      return Freeing::Upstream;
  return Freeing::StraightLine;
}

struct DeallocAfterLastUsePass
    : public mlir::zshard::impl::DeallocAfterLastUseBase<
          DeallocAfterLastUsePass> {
  using DeallocAfterLastUseBase::DeallocAfterLastUseBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    bool upstreamNeeded =
        insertDeallocs && llvm::any_of(funcs, [](func::FuncOp func) {
          return classify(func) == Freeing::Upstream;
        });
    if (upstreamNeeded) {
      OpPassManager upstream(ModuleOp::getOperationName());
      bufferization::BufferDeallocationPipelineOptions options;
      bufferization::buildBufferDeallocationPipeline(upstream, options);
      if (failed(runPipeline(upstream, module)))
        return signalPassFailure();
    }
    for (func::FuncOp func : funcs) {
      bool insert = insertDeallocs && !upstreamNeeded &&
                    classify(func) == Freeing::StraightLine;
      if (!func.isExternal())
        for (Block &block : func.getBody())
          process(block, insert);
    }
  }

  /// Frees each allocation of `block` right after its last use: moves its
  /// deallocation there, or inserts one when `insert` (the block then has
  /// none).
  void process(Block &block, bool insert) {
    // Positions in the block as it is now; placing deallocations does not
    // change the order of the other ops, so they stay valid below.
    BlockPositions position = numberOps(block);
    SmallVector<std::pair<Operation *, Operation *>> moves;
    SmallVector<std::pair<Value, Operation *>> inserts;
    if (insert) {
      for (memref::AllocOp alloc : block.getOps<memref::AllocOp>())
        inserts.push_back({alloc, lastTouch(alloc, block, position)});
    } else {
      for (memref::DeallocOp dealloc : block.getOps<memref::DeallocOp>()) {
        Value buffer = dealloc.getMemref();
        auto alloc = buffer.getDefiningOp<memref::AllocOp>();
        if (!alloc || alloc->getBlock() != &block)
          continue;
        Operation *last = lastTouch(buffer, block, position, {dealloc});
        if (position.lookup(last) + 1 < position.lookup(dealloc))
          moves.push_back({dealloc, last});
      }
    }
    for (auto [dealloc, last] : moves) {
      dealloc->moveAfter(last);
      ++numMoved;
    }
    for (auto [buffer, last] : inserts) {
      // Never after the terminator: a buffer the return reads is not ours.
      if (last->hasTrait<OpTrait::IsTerminator>())
        continue;
      OpBuilder builder(last->getContext());
      builder.setInsertionPointAfter(last);
      memref::DeallocOp::create(builder, buffer.getLoc(), buffer);
      ++numInserted;
    }
  }
};

} // namespace
