//===- ZShardVerifyUtils.h - checks shared by zshard verifiers --*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_DIALECT_ZSHARD_IR_ZSHARDVERIFYUTILS_H
#define ZSHARD_LIB_DIALECT_ZSHARD_IR_ZSHARDVERIFYUTILS_H

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace zshard {

/// Checks that `axes` is non-empty (unless `allowEmpty`), non-negative and
/// free of repeats; `what` names the list in diagnostics.
LogicalResult verifyAxisList(Operation *op, ArrayRef<int64_t> axes,
                             StringRef what, bool allowEmpty = false);

/// Looks up the `shard.grid` named `grid` and checks every axis is in range.
/// Returns the grid, or null after emitting a diagnostic.
shard::GridOp lookupGridAndCheckAxes(Operation *op, FlatSymbolRefAttr grid,
                                     ArrayRef<int64_t> axes,
                                     SymbolTableCollection &symbols);

/// Product of the grid sizes along `axes`; std::nullopt when one is dynamic.
std::optional<int64_t> getGroupSize(shard::GridOp grid, ArrayRef<int64_t> axes);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_LIB_DIALECT_ZSHARD_IR_ZSHARDVERIFYUTILS_H
