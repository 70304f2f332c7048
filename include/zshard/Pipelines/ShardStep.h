//===- ShardStep.h - the sharding stages of a training step -----*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The passes between an unsharded training step and its sharded, scheduled
/// form, written once in the order they must run: checkpointing
/// (zshard-remat, on the unsharded step), gradient accumulation
/// (zshard-accumulate, still unsharded), units (zshard-form-units),
/// sharding (zshard-shard), the schedule (zshard-async, zshard-prefetch)
/// and offloading (zshard-offload). `zshard-compile --strategy`,
/// `zshard-compile --auto` and the `zshard-shard-step` pipeline of
/// zshard-opt build them with buildShardStepPipeline.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_PIPELINES_SHARDSTEP_H
#define ZSHARD_PIPELINES_SHARDSTEP_H

#include "zshard/Analysis/Microbatches.h"
#include "zshard/Support/EnumOption.h"
#include "zshard/Transforms/RematOptions.h"
#include "zshard/Transforms/ScheduleOptions.h"
#include "zshard/Transforms/UnitOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "zshard/abi/Strategy.h"

#include <optional>
#include <string>

namespace mlir {
namespace zshard {

/// FSDP's sharding strategies (and ZeRO-1), as zshard-form-units names them
/// and the manifest records them (zshard/abi/Strategy.h).
using ShardingStrategy = ::zshard_abi::Strategy;

} // namespace zshard
} // namespace mlir

ZSHARD_LISTING_ENUM_PARSER(mlir::zshard::ShardingStrategy)

namespace mlir {
namespace zshard {

/// The zshard spelling of `strategy` (`full_shard`, ...), which
/// zshard-form-units takes.
StringRef getStrategyName(ShardingStrategy strategy);

/// Reads a strategy in the zshard spelling (`full_shard`) or as FSDP's
/// `ShardingStrategy` member (`FULL_SHARD`, `_HYBRID_SHARD_ZERO2`), in any
/// case and with `-` for `_`; std::nullopt for anything else.
std::optional<ShardingStrategy> parseShardingStrategy(StringRef text);

/// Whether `strategy` shards inside groups and replicates across them.
using ::zshard_abi::isHybrid;

/// What buildShardStepPipeline builds. The defaults are FSDP's: one unit
/// per block, BACKWARD_PRE, forward prefetch one unit ahead.
struct ShardStepOptions {
  ShardingStrategy strategy = ShardingStrategy::FullShard;
  int64_t ranks = 1;
  /// Replica groups of the hybrid strategies (1 otherwise).
  int64_t replicas = 1;
  WrapPolicy wrap = WrapPolicy::Transformer;
  /// Transformer policy: comma-separated module paths of the units, `<i>`
  /// standing for an index. The first of them is also the block pattern
  /// of checkpointing.
  std::string pattern = "h.<i>";
  /// Size policy: elements a unit holds before it is closed.
  int64_t minParams = 1000000;
  /// The zshard-remat policy.
  RematPolicy remat = RematPolicy::none();
  /// Split collectives into start/wait and schedule them (zshard-async,
  /// zshard-prefetch); false leaves every collective synchronous.
  bool schedule = true;
  int64_t forwardDepth = 1;
  BackwardPrefetch backward = BackwardPrefetch::Pre;
  /// Most gathered units live at once (0: no limit).
  int64_t maxInflight = 0;
  /// Forward gathers below this many bytes that start together travel as
  /// one (0: no bucketing).
  int64_t bucketBytes = 0;
  /// Keep the optimizer state in host memory (zshard-offload).
  bool offload = false;
  /// Gradient accumulation over this many microbatches (zshard-accumulate,
  /// after checkpointing); 1: none.
  int64_t microbatches = 1;
  /// Where an accumulating step gathers (zshard-shard microbatch-gathers).
  MicrobatchGathers microbatchGathers = MicrobatchGathers::Regather;
  /// The units' buffer type (FSDP's buffer_dtype; zshard-form-units
  /// buffer-type).
  UnitFloatType bufferType = UnitFloatType::Own;
};

/// Adds the sharding stages for `options` to `pm` (on the module):
/// zshard-remat (unless the policy is `none`), zshard-accumulate (for more
/// than one microbatch), zshard-form-units,
/// zshard-shard, zshard-async and zshard-prefetch (when scheduling), and
/// zshard-offload (when offloading).
void buildShardStepPipeline(OpPassManager &pm, const ShardStepOptions &options);

/// The stages of buildShardStepPipeline one at a time, in its order (the
/// compile phases remat, units, shard and schedule,
/// zshard/Compiler/Compiler.h): checkpointing and accumulation on the
/// unsharded step, units, sharding, and the schedule with offloading.
void buildRematStage(OpPassManager &pm, const ShardStepOptions &options);
void buildUnitsStage(OpPassManager &pm, const ShardStepOptions &options);
void buildShardStage(OpPassManager &pm, const ShardStepOptions &options);
void buildScheduleStage(OpPassManager &pm, const ShardStepOptions &options);

/// The options of ShardStepOptions as pipeline options, with the passes'
/// spellings, for `zshard-shard-step` and `zshard-pipeline`. `Base` chains
/// option groups into one struct.
template <typename Derived, typename Base = PassPipelineOptions<Derived>>
struct ShardStepPipelineOptionsBase : public Base {
  template <typename T>
  using Option = mlir::detail::PassOptions::Option<T>;

  Option<ShardingStrategy> strategy{
      *this, "strategy", llvm::cl::desc("Sharding strategy"),
      llvm::cl::init(ShardingStrategy::FullShard),
      llvm::cl::values(
          clEnumValN(ShardingStrategy::NoShard, "no_shard", "DDP"),
          clEnumValN(ShardingStrategy::Zero1, "zero1", "ZeRO-1"),
          clEnumValN(ShardingStrategy::ShardGradOp, "shard_grad_op", "ZeRO-2"),
          clEnumValN(ShardingStrategy::FullShard, "full_shard", "ZeRO-3"),
          clEnumValN(ShardingStrategy::HybridShard, "hybrid_shard",
                     "ZeRO-3 in a group, replicated across groups"),
          clEnumValN(ShardingStrategy::HybridShardZero2, "hybrid_shard_zero2",
                     "ZeRO-2 in a group, replicated across groups"))};
  Option<int64_t> ranks{
      *this, "ranks", llvm::cl::desc("Ranks in the grid"), llvm::cl::init(1)};
  Option<int64_t> replicas{
      *this, "replicas", llvm::cl::desc("Hybrid strategies: replica groups"),
      llvm::cl::init(1)};
  Option<WrapPolicy> policy{
      *this, "policy", llvm::cl::desc("Wrap policy"),
      llvm::cl::init(WrapPolicy::Transformer),
      llvm::cl::values(clEnumValN(WrapPolicy::Transformer, "transformer",
                                  "one unit per module path of `pattern`"),
                       clEnumValN(WrapPolicy::Size, "size",
                                  "units of at least `min-params`"))};
  Option<std::string> pattern{
      *this, "pattern",
      llvm::cl::desc("Module paths of the units (and checkpointed blocks)"),
      llvm::cl::init("h.<i>")};
  Option<int64_t> minParams{
      *this, "min-params", llvm::cl::desc("size: elements a unit holds"),
      llvm::cl::init(1000000)};
  Option<RematPolicy> remat{
      *this, "remat",
      llvm::cl::desc("Checkpointing: none, all, every=K, selective or "
                     "budget=BYTES"),
      llvm::cl::init(RematPolicy::none())};
  Option<bool> schedule{
      *this, "schedule", llvm::cl::desc("Async collectives with prefetching"),
      llvm::cl::init(true)};
  Option<int64_t> forwardDepth{
      *this, "forward-depth", llvm::cl::desc("Units gathered ahead in forward"),
      llvm::cl::init(1)};
  Option<BackwardPrefetch> backward{
      *this, "backward", llvm::cl::desc("Backward prefetch"),
      llvm::cl::init(BackwardPrefetch::Pre),
      llvm::cl::values(
          clEnumValN(BackwardPrefetch::Pre, "pre", "BACKWARD_PRE"),
          clEnumValN(BackwardPrefetch::Post, "post", "BACKWARD_POST"),
          clEnumValN(BackwardPrefetch::None, "none", "no backward prefetch"))};
  Option<int64_t> maxInflight{
      *this, "max-inflight",
      llvm::cl::desc("Most gathered units live at once (0: no limit)"),
      llvm::cl::init(0)};
  Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("Bucket forward gathers below this size (0: none)"),
      llvm::cl::init(0)};
  Option<bool> offload{
      *this, "offload", llvm::cl::desc("Optimizer state in host memory"),
      llvm::cl::init(false)};
  Option<int64_t> microbatches{
      *this, "microbatches",
      llvm::cl::desc("Gradient accumulation over K microbatches"),
      llvm::cl::init(1)};
  Option<MicrobatchGathers> microbatchGathers{
      *this, "microbatch-gathers",
      llvm::cl::desc("Accumulating: gather per microbatch or once"),
      llvm::cl::init(MicrobatchGathers::Regather),
      llvm::cl::values(clEnumValN(MicrobatchGathers::Regather, "regather",
                                  "gather in every microbatch"),
                       clEnumValN(MicrobatchGathers::Keep, "keep",
                                  "gather once for all microbatches"))};
  Option<UnitFloatType> bufferType{
      *this, "buffer-type",
      llvm::cl::desc("Element type buffers are computed with"),
      llvm::cl::init(UnitFloatType::Own), getBufferTypeValues()};

  /// These options as ShardStepOptions.
  ShardStepOptions getOptions() const {
    ShardStepOptions options;
    options.strategy = strategy;
    options.ranks = ranks;
    options.replicas = replicas;
    options.wrap = policy;
    options.pattern = pattern;
    options.minParams = minParams;
    options.remat = remat;
    options.schedule = schedule;
    options.forwardDepth = forwardDepth;
    options.backward = backward;
    options.maxInflight = maxInflight;
    options.bucketBytes = bucketBytes;
    options.offload = offload;
    options.microbatches = microbatches;
    options.microbatchGathers = microbatchGathers;
    options.bufferType = bufferType;
    return options;
  }
};

/// The options of the `zshard-shard-step` pipeline (zshard-opt).
struct ShardStepPipelineOptions
    : public ShardStepPipelineOptionsBase<ShardStepPipelineOptions> {};

/// Registers `zshard-shard-step` (part of registerZShardPipelines).
void registerShardStepPipeline();

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_PIPELINES_SHARDSTEP_H
