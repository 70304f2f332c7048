//===- AutoShard.h - choosing a strategy under a memory budget --*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The "auto" of auto-sharding: given ranks, memory per rank, a device and a
/// link, tries the candidates in FSDP's decision order -- no_shard, then
/// with activation checkpointing, shard_grad_op, full_shard (each with and
/// without checkpointing) -- on copies of the step, predicts each one's
/// per-rank peak (the memory plan) and step time (the cost model, with the
/// prefetch schedule), keeps those that fit and picks the fastest.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_PIPELINES_AUTOSHARD_H
#define ZSHARD_PIPELINES_AUTOSHARD_H

#include "zshard/Analysis/CostModel.h"
#include "zshard/Pipelines/ShardStep.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir {
namespace zshard {

struct AutoShardOptions {
  int64_t memoryPerRank = 0; ///< bytes
  DeviceModel device;
  LinkModel link;
  /// What every candidate shares: the ranks, the units (wrap policy and
  /// pattern, also the blocks checkpointed) and the schedule. Each
  /// candidate sets the strategy, checkpointing and offloading.
  ShardStepOptions sharding;
};

/// One candidate and what it would cost.
struct AutoCandidate {
  ShardingStrategy strategy = ShardingStrategy::NoShard;
  bool remat = false;
  /// Optimizer state in the host pool (zshard-offload).
  bool offload = false;
  /// A step accumulating microbatches: full_shard keeping its gathers
  /// through all of them (zshard-shard microbatch-gathers=keep) rather than
  /// gathering in each.
  bool keepGathered = false;
  int64_t peakBytes = 0;
  /// Optimizer state the runtime holds in device memory at every point of
  /// the step (what offloading it takes off the peak).
  int64_t optimizerStateBytes = 0;
  /// Offloaded bytes in the host pool.
  int64_t hostBytes = 0;
  double stepSeconds = 0;
  double exposedSeconds = 0;
  bool fits = false;
  std::string name() const {
    return (getStrategyName(strategy) + (keepGathered ? "+keep" : "") +
            (remat ? "+remat" : "") + (offload ? "+offload" : ""))
        .str();
  }
};

/// Evaluates the candidates on copies of `module` (an unsharded step):
/// no_shard, shard_grad_op and full_shard, each without and with
/// checkpointing (when the sharding accumulates microbatches, full_shard
/// both gathering in every microbatch and keeping its gathers through all
/// of them, `+keep`), and, for each of them that does not fit, the same with
/// the optimizer state offloaded to host memory (its device peak less the
/// state it held, its step longer by moving that state over the host link
/// twice). Prints a table of them with the reason each won or lost to `os`
/// and returns the winner, leaving `module` as it is: its passes
/// (getCandidateOptions) are the compile phases' to run. Fails, naming the
/// shortfall in bytes, when nothing fits.
FailureOr<AutoCandidate> chooseAutoShard(ModuleOp module,
                                         const AutoShardOptions &options,
                                         llvm::raw_ostream &os);

/// The sharding stages (buildShardStepPipeline) that turn the unsharded
/// step into `candidate`.
ShardStepOptions getCandidateOptions(const AutoCandidate &candidate,
                                     const AutoShardOptions &options);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_PIPELINES_AUTOSHARD_H
