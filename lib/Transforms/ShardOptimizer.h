//===- ShardOptimizer.h - the optimizer on a unit's shards ------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The sharding pass's plan of a unit, and the rewrite that runs the
/// optimizer on this rank's shards: each member's zshard.adamw rebuilt
/// on this rank's slice of the member, reading and writing the unit's flat
/// parameter and optimizer-state shards.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_TRANSFORMS_SHARDOPTIMIZER_H
#define ZSHARD_LIB_TRANSFORMS_SHARDOPTIMIZER_H

#include "zshard/Analysis/OptimizerAnalysis.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

#include "GradientSums.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"

#include <string>
#include <utility>

namespace mlir {
namespace zshard {

/// One parameter of a unit.
struct Member {
  unsigned argIndex;
  MemberAttr layout;
  const ParamUpdate *update;
  /// Whole sums over the member's gradient besides its update (the terms of
  /// a gradient norm), rebuilt wherever the gradient moves.
  SmallVector<linalg::GenericOp> sums;
};

/// Everything the rewrite of one unit needs.
struct UnitPlan {
  UnitOp unit;
  SmallVector<Member> members;
  int64_t shardSize = 0;
  /// Optimizer-state slot name -> element type, in first-seen order.
  SmallVector<std::pair<std::string, Type>> slots;

  SmallVector<MemberAttr> layouts() const {
    SmallVector<MemberAttr> result;
    for (const Member &m : members)
      result.push_back(m.layout);
    return result;
  }
};

/// Ops the pass creates for a unit carry the unit's name as their module
/// path, as the contract asks of every op.
inline Location unitLoc(UnitOp unit) {
  return NameLoc::get(unit.getSymNameAttr());
}

/// This rank's flat shards of a unit: of its parameters, and one per
/// optimizer-state slot (in the order of the plan's slots).
struct UnitShards {
  Value param;
  SmallVector<Value> states;
};

/// Rewrites the optimizer updates of `plan`'s (sharded) unit to run on this
/// rank's part of each member, after the last of the old updates, leaving
/// `builder` after the new ops. `rankCoord` is this rank's coordinate on the
/// unit's shard axis and `gradShard` its shard of the reduced gradients (in
/// the unit's reduce type). `shards` holds the parameter shard (none for
/// zero1, whose whole parameters are sliced here) and the state shards.
/// Returns the updated shards. The old updates' results are marked in
/// `deadResults`, the members' state arguments (and parameters, when
/// sharded) in `deadArgs`, and the whole sums over the members' gradients,
/// rebuilt on this rank's part, are appended to `partialSums`.
UnitShards shardOptimizer(OpBuilder &builder, const StepContract &contract,
                          Block &block, const UnitPlan &plan, Value rankCoord,
                          const UnitShards &shards, Value gradShard,
                          SmallVectorImpl<PartialSum> &partialSums,
                          llvm::BitVector &deadArgs,
                          llvm::BitVector &deadResults);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_LIB_TRANSFORMS_SHARDOPTIMIZER_H
