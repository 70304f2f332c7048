//===- BufferUses.cpp - Where a buffer is touched in a block --------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "Bufferized/BufferUses.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::zshard;

BlockPositions mlir::zshard::numberOps(Block &block) {
  BlockPositions position;
  for (auto [i, op] : llvm::enumerate(block))
    position[&op] = unsigned(i);
  return position;
}

SmallVector<Operation *>
mlir::zshard::touchingOps(Value buffer, Block &block,
                          llvm::ArrayRef<Operation *> ignore) {
  llvm::SetVector<Operation *> touching;
  SmallVector<Value> worklist = {buffer};
  llvm::SmallPtrSet<Value, 16> seen = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (llvm::is_contained(ignore, user))
        continue;
      if (Operation *top = block.findAncestorOpInBlock(*user))
        touching.insert(top);
      for (Value result : user->getResults())
        if (seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return touching.takeVector();
}

Operation *mlir::zshard::lastTouch(Value buffer, Block &block,
                                   const BlockPositions &position,
                                   llvm::ArrayRef<Operation *> ignore) {
  Operation *last = buffer.getDefiningOp();
  unsigned lastPosition = last ? position.lookup(last) : 0;
  for (Operation *op : touchingOps(buffer, block, ignore))
    if (unsigned at = position.lookup(op); !last || at > lastPosition) {
      last = op;
      lastPosition = at;
    }
  return last;
}
