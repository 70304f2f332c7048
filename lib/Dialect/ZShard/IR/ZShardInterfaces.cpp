//===- ZShardInterfaces.cpp - zshard op interfaces and helpers ------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardInterfaces.h"

#include "ZShardVerifyUtils.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::zshard;

#include "zshard/Dialect/ZShard/IR/ZShardInterfaces.cpp.inc"

std::optional<int64_t> zshard::getGroupSize(shard::GridOp grid,
                                            ArrayRef<int64_t> axes) {
  ArrayRef<int64_t> shape = grid.getShape();
  int64_t size = 1;
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) ||
        ShapedType::isDynamic(shape[axis]))
      return std::nullopt;
    size *= shape[axis];
  }
  return size;
}

std::optional<int64_t>
zshard::getStaticGroupSize(Operation *from, FlatSymbolRefAttr grid,
                           ArrayRef<int64_t> axes,
                           SymbolTableCollection *symbols) {
  shard::GridOp gridOp =
      symbols ? symbols->lookupNearestSymbolFrom<shard::GridOp>(from, grid)
              : SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(from, grid);
  if (!gridOp)
    return std::nullopt;
  return getGroupSize(gridOp, axes);
}

LogicalResult zshard::verifyAxisList(Operation *op, ArrayRef<int64_t> axes,
                                     StringRef what, bool allowEmpty) {
  if (axes.empty() && !allowEmpty)
    return op->emitOpError() << "needs at least one " << what;
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t axis : axes) {
    if (axis < 0)
      return op->emitOpError() << what << " " << axis << " is negative";
    if (!seen.insert(axis).second)
      return op->emitOpError() << what << " " << axis << " is repeated";
  }
  return success();
}

shard::GridOp zshard::lookupGridAndCheckAxes(Operation *op,
                                             FlatSymbolRefAttr grid,
                                             ArrayRef<int64_t> axes,
                                             SymbolTableCollection &symbols) {
  auto gridOp = symbols.lookupNearestSymbolFrom<shard::GridOp>(op, grid);
  if (!gridOp) {
    op->emitOpError() << "grid " << grid << " does not name a shard.grid";
    return nullptr;
  }
  for (int64_t axis : axes) {
    if (axis >= gridOp.getRank()) {
      op->emitOpError() << "grid axis " << axis << " is out of range for grid "
                        << grid << " of rank " << gridOp.getRank();
      return nullptr;
    }
  }
  return gridOp;
}
