//===- GradientSums.h - whole sums over gradients ---------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Besides its optimizer update, a gradient may be read by whole sums (full
/// reductions to a scalar, such as the sum of squares a global gradient norm
/// adds up). Sharding moves the gradient, so these sums must move with it:
/// onto the reduced gradient, or onto this rank's shard of it followed by an
/// all-reduce. These helpers find such sums, rebuild them over another
/// operand, and restore dominance after a value's definition moved later.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_TRANSFORMS_GRADIENTSUMS_H
#define ZSHARD_LIB_TRANSFORMS_GRADIENTSUMS_H

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace zshard {

/// The readers of gradient `grad` other than `update`: every one must be a
/// whole sum, `sum_i f(grad_i)` into a rank-0 tensor (a linalg.generic with
/// only reduction loops, `grad` as its one input through the identity map,
/// and a body yielding `out + f(in)`). Emits an error naming `param` and the
/// reader otherwise.
FailureOr<SmallVector<linalg::GenericOp>>
findGradientSums(Value grad, Operation *update, StringRef param);

/// `sum` rebuilt over `operand` (any shape; the same body and init, the init
/// copied when it is defined later), at the builder's insertion point.
linalg::GenericOp rebuildSum(OpBuilder &builder, linalg::GenericOp sum,
                             Value operand);

/// Moves every op of `anchor`'s block that sits before `anchor` and depends,
/// directly or through other such ops, on one of `values` to just after
/// `anchor`, keeping their order. Used after the definitions of `values` were
/// rebuilt later in the block than their old users.
void moveDependentsAfter(Operation *anchor, ValueRange values);

/// A whole sum over a gradient rebuilt on this rank's shard of it: the
/// partial sums of all ranks add up to the old sum.
struct PartialSum {
  linalg::GenericOp sum;
  Value partial;
  UnitOp unit;
};

/// Adds up the partial sums of all ranks with one `all_reduce sum` over the
/// units' (common) shard axes, after the last of them, and replaces each old
/// sum by its total, moving what depends on the totals after them. Fails
/// when the units shard on different groups or the sums differ in type.
LogicalResult combinePartialSums(MutableArrayRef<PartialSum> partialSums);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_LIB_TRANSFORMS_GRADIENTSUMS_H
