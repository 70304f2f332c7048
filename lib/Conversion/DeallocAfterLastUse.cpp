//===- DeallocAfterLastUse.cpp - --zshard-dealloc-after-last-use ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// The last op of `block` (other than `dealloc`) that may touch the buffer
/// `alloc`: one that uses it or a value derived from it, transitively
/// through every result of such ops.
Operation *lastUse(Value alloc, Operation *dealloc, Block &block) {
  Operation *last = alloc.getDefiningOp();
  SmallVector<Value> worklist = {alloc};
  llvm::SmallPtrSet<Value, 16> seen = {alloc};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == dealloc)
        continue;
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top)
        continue;
      if (last->isBeforeInBlock(top))
        last = top;
      for (Value result : user->getResults())
        if (seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return last;
}

struct DeallocAfterLastUsePass
    : public mlir::zshard::impl::DeallocAfterLastUseBase<
          DeallocAfterLastUsePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    for (Block &block : func.getBody()) {
      SmallVector<memref::DeallocOp> deallocs(
          block.getOps<memref::DeallocOp>());
      for (memref::DeallocOp dealloc : deallocs) {
        Value buffer = dealloc.getMemref();
        auto alloc = buffer.getDefiningOp<memref::AllocOp>();
        if (!alloc || alloc->getBlock() != &block)
          continue;
        Operation *last = lastUse(buffer, dealloc, block);
        if (last->getNextNode() == dealloc.getOperation() ||
            !last->isBeforeInBlock(dealloc))
          continue;
        dealloc->moveAfter(last);
        ++numMoved;
      }
    }
  }
};

} // namespace
