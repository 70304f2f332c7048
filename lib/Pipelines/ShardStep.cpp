//===- ShardStep.cpp - the sharding stages of a training step -------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Pipelines/ShardStep.h"

#include "zshard/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::zshard;

StringRef zshard::getStrategyName(ShardingStrategy strategy) {
  return ::zshard_abi::strategyName(strategy);
}

std::optional<ShardingStrategy> zshard::parseShardingStrategy(StringRef text) {
  std::string key = text.trim().lower();
  std::replace(key.begin(), key.end(), '-', '_');
  // FSDP spells its private hybrid ZeRO-2 `_HYBRID_SHARD_ZERO2`.
  return ::zshard_abi::parseStrategyName(StringRef(key).ltrim('_'));
}

void zshard::buildRematStage(OpPassManager &pm,
                             const ShardStepOptions &options) {
  // Checkpointing runs on the unsharded step: the backward gather of a
  // unit then covers the parameters its recomputation reads.
  if (!options.remat.isNone()) {
    RematOptions remat;
    remat.policy = options.remat;
    remat.pattern = StringRef(options.pattern).split(',').first.trim().str();
    pm.addPass(createRemat(remat));
  }
  if (options.microbatches != 1) {
    AccumulateOptions accumulate;
    accumulate.microbatches = options.microbatches;
    pm.addPass(createAccumulate(accumulate));
  }
}

void zshard::buildUnitsStage(OpPassManager &pm,
                             const ShardStepOptions &options) {
  FormUnitsOptions units;
  units.policy = options.wrap;
  units.pattern = options.pattern;
  units.minParams = options.minParams;
  units.ranks = options.ranks;
  units.replicas = options.replicas;
  // The ABI's and the dialect's strategies are one enum (toAbiStrategy).
  units.strategy = Strategy(static_cast<int>(options.strategy));
  units.bufferType = options.bufferType;
  pm.addPass(createFormUnits(units));
}

void zshard::buildShardStage(OpPassManager &pm,
                             const ShardStepOptions &options) {
  ShardOptions shard;
  shard.microbatchGathers = options.microbatchGathers;
  pm.addPass(createShard(shard));
}

void zshard::buildScheduleStage(OpPassManager &pm,
                                const ShardStepOptions &options) {
  if (options.schedule) {
    pm.addPass(createAsync());
    PrefetchOptions prefetch;
    prefetch.forwardDepth = options.forwardDepth;
    prefetch.backward = options.backward;
    prefetch.maxInflight = options.maxInflight;
    prefetch.bucketBytes = options.bucketBytes;
    pm.addPass(createPrefetch(prefetch));
  }
  if (options.offload)
    pm.addPass(createOffload());
}

void zshard::buildShardStepPipeline(OpPassManager &pm,
                                    const ShardStepOptions &options) {
  buildRematStage(pm, options);
  buildUnitsStage(pm, options);
  buildShardStage(pm, options);
  buildScheduleStage(pm, options);
}

void zshard::registerShardStepPipeline() {
  PassPipelineRegistration<ShardStepPipelineOptions>(
      "zshard-shard-step",
      "Shard an unsharded training step: checkpointing, units, sharding, "
      "the async prefetch schedule and offloading, in the order "
      "zshard-compile --strategy runs them",
      [](OpPassManager &pm, const ShardStepPipelineOptions &options) {
        buildShardStepPipeline(pm, options.getOptions());
      });
}
