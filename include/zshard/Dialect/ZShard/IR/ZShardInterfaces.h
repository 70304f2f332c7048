//===- ZShardInterfaces.h - zshard op interfaces ----------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDINTERFACES_H
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDINTERFACES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"
#include "zshard/Support/TypeBytes.h"

#include <optional>

namespace mlir {
class SymbolTableCollection;
namespace zshard {

/// Size of the group formed by `axes` of the `shard.grid` named `grid`, as
/// seen from `from`; std::nullopt when the grid is missing, an axis is out of
/// range or a size is dynamic.
std::optional<int64_t>
getStaticGroupSize(Operation *from, FlatSymbolRefAttr grid,
                   ArrayRef<int64_t> axes,
                   SymbolTableCollection *symbols = nullptr);

class CollectiveOpInterface;
namespace detail {
/// The structural rules every collective obeys (see ZShardOps.cpp).
LogicalResult verifyCollectiveOp(Operation *op);
} // namespace detail

} // namespace zshard
} // namespace mlir

#include "zshard/Dialect/ZShard/IR/ZShardInterfaces.h.inc"

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDINTERFACES_H
