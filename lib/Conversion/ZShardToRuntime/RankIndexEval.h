//===- RankIndexEval.h - index arithmetic for every rank --------*- C++ -*-===//
//
// Part of the zshard project.
//
// Offsets and sizes of shard slices in a bufferized step are index
// arithmetic over the rank's grid coordinates (calls of
// zshard_rt_step_grid_coord that carry their axis size). This evaluates
// such values for every rank of the grid, so that a pass can prove a
// property (two slices never overlap) for each rank rather than bound it.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_CONVERSION_RANKINDEXEVAL_H
#define ZSHARD_LIB_CONVERSION_RANKINDEXEVAL_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::zshard {

/// The values of `values` on each rank: one row per assignment of the grid
/// coordinates they depend on, one column per value. Fails (nullopt) when a
/// value is not integer arithmetic over constants and coordinates of axes
/// with a known size, or when there are more than `maxRanks` assignments.
std::optional<SmallVector<SmallVector<int64_t>>>
evaluateOnEveryRank(ArrayRef<Value> values, int64_t maxRanks = 4096);

} // namespace mlir::zshard

#endif // ZSHARD_LIB_CONVERSION_RANKINDEXEVAL_H
