//===- Microbatches.h - the microbatches of an accumulating step -*- C++
//-*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A step that accumulates gradients over K microbatches
/// (`--zshard-accumulate`, docs/contract.md "Accumulating steps") runs its
/// forward and backward K times, one unrolled copy per microbatch. The step
/// says K (`zshard.microbatches` on the step function) and each top-level op
/// of a copy says which microbatch it computes (`zshard.microbatch`), so
/// that sharding can place a unit's gathers per microbatch or once for all
/// of them. These helpers read and check those attributes.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_MICROBATCHES_H
#define ZSHARD_ANALYSIS_MICROBATCHES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "zshard/Dialect/ZShard/IR/ZShardContract.h"
#include "zshard/Support/EnumOption.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace zshard {

/// Where a sharded unit's parameters are gathered when the step accumulates
/// microbatches (zshard-shard `microbatch-gathers`).
enum class MicrobatchGathers {
  /// Every microbatch gathers as a whole step does: full_shard gathers for
  /// forward and again for backward, shard_grad_op once kept through its
  /// backward (FSDP with `no_sync`).
  Regather,
  /// The first gather stays live until the last backward use of the last
  /// microbatch: one gather per unit per step, all units' parameters whole
  /// through the step.
  Keep,
};

/// The spelling of zshard-shard's option: `regather` or `keep`.
StringRef stringifyMicrobatchGathers(MicrobatchGathers gathers);

/// K of `step`: its `zshard.microbatches`, or 1 when it does not accumulate.
int64_t getNumMicrobatches(func::FuncOp step);

/// The microbatch the top-level op `op` computes (its `zshard.microbatch`),
/// or std::nullopt (an op outside the copies, such as the optimizer).
std::optional<int64_t> getMicrobatch(Operation *op);

/// Checks the attributes of an accumulating step: `zshard.microbatches` an
/// i64 >= 2, and each `zshard.microbatch` an i64 in [0, K) on a top-level op
/// of a step that has it. Emits one error per violation.
LogicalResult verifyMicrobatches(func::FuncOp step);

} // namespace zshard
} // namespace mlir

ZSHARD_LISTING_ENUM_PARSER(mlir::zshard::MicrobatchGathers)

#endif // ZSHARD_ANALYSIS_MICROBATCHES_H
