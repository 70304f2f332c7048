//===- AutoShard.cpp - choosing a strategy under a memory budget ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Pipelines/AutoShard.h"

#include "zshard/Analysis/MemoryPlan.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Pipelines/Pipelines.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::zshard;

ShardStepOptions
mlir::zshard::getCandidateOptions(const AutoCandidate &candidate,
                                  const AutoShardOptions &options) {
  ShardStepOptions sharding = options.sharding;
  sharding.strategy = candidate.strategy;
  sharding.remat = candidate.remat ? RematPolicy::all() : RematPolicy::none();
  sharding.offload = candidate.offload;
  sharding.microbatchGathers = candidate.keepGathered
                                   ? MicrobatchGathers::Keep
                                   : MicrobatchGathers::Regather;
  return sharding;
}

FailureOr<AutoCandidate>
mlir::zshard::chooseAutoShard(ModuleOp module, const AutoShardOptions &options,
                              llvm::raw_ostream &os) {
  // With microbatches, full_shard may keep its gathers through all of
  // them (shard_grad_op keeping them would be the same program).
  bool accumulating = options.sharding.microbatches > 1;
  SmallVector<AutoCandidate> candidates;
  for (ShardingStrategy strategy :
       {ShardingStrategy::NoShard, ShardingStrategy::ShardGradOp,
        ShardingStrategy::FullShard})
    for (bool keep : {false, true})
      for (bool remat : {false, true})
        if (!keep || (accumulating && strategy == ShardingStrategy::FullShard))
          candidates.push_back({strategy, remat, /*offload=*/false, keep});

  os << llvm::formatv("auto: {0} ranks, {1} per rank, {2} over {3}",
                      options.sharding.ranks,
                      formatBytes(options.memoryPerRank), options.device.name,
                      options.link.name);
  if (accumulating)
    os << llvm::formatv(", {0} microbatches", options.sharding.microbatches);
  os << "\n";
  os << llvm::formatv("{0,-28} {1,14} {2,12} {3,12}  {4}\n", "candidate",
                      "peak/rank", "step (ms)", "exposed (ms)", "verdict");
  for (AutoCandidate &candidate : candidates) {
    OwningOpRef<ModuleOp> copy = module.clone();
    PassManager sharding(module.getContext());
    buildShardStepPipeline(sharding, getCandidateOptions(candidate, options));
    if (failed(sharding.run(*copy)))
      return module.emitError() << "auto: cannot build candidate "
                                << candidate.name() << " (see above)";
    StepContract contract(*copy);
    if (failed(contract.run()))
      return failure();
    FailureOr<CostReport> cost =
        CostModel(options.device, options.link).estimate(contract.getStep());
    if (failed(cost))
      return failure();
    candidate.stepSeconds = cost->stepSeconds;
    candidate.exposedSeconds = cost->exposedSeconds;
    std::string stepName = contract.getStep().getSymName().str();
    PassManager bufferize(module.getContext());
    buildBufferizeStepPipeline(bufferize, BufferizeOptions());
    if (failed(bufferize.run(*copy)))
      return module.emitError() << "auto: cannot plan the memory of "
                                << candidate.name() << " (see above)";
    auto lowered = copy->lookupSymbol<func::FuncOp>(stepName);
    MemoryPlan plan(lowered);
    if (failed(plan.run()))
      return failure();
    addRuntimeHeldBuffers(plan, contract, lowered);
    candidate.peakBytes = plan.getPeakTotal();
    candidate.optimizerStateBytes =
        plan.getHeld()[int(MemCategory::OptimizerState)];
    candidate.fits = candidate.peakBytes <= options.memoryPerRank;
  }
  // Offloading takes the held optimizer state off every point of the
  // device timeline (the update writes it in place), and costs moving it
  // over the host link and back, as the cost model charges it.
  for (size_t i = 0, e = candidates.size(); i < e; ++i) {
    if (candidates[i].fits || candidates[i].optimizerStateBytes == 0)
      continue;
    AutoCandidate offloaded = candidates[i];
    offloaded.offload = true;
    offloaded.hostBytes = offloaded.optimizerStateBytes;
    offloaded.peakBytes -= offloaded.optimizerStateBytes;
    offloaded.optimizerStateBytes = 0;
    offloaded.stepSeconds +=
        2.0 * double(offloaded.hostBytes) / options.device.hostBandwidth;
    offloaded.fits = offloaded.peakBytes <= options.memoryPerRank;
    candidates.push_back(offloaded);
  }

  AutoCandidate *best = nullptr;
  for (AutoCandidate &candidate : candidates)
    if (candidate.fits &&
        (!best || candidate.stepSeconds < best->stepSeconds))
      best = &candidate;
  for (AutoCandidate &candidate : candidates) {
    std::string verdict;
    if (&candidate == best)
      verdict = "chosen: the fastest that fits";
    else if (!candidate.fits)
      verdict = "does not fit: " +
                formatBytes(candidate.peakBytes - options.memoryPerRank) + " over";
    else
      verdict = llvm::formatv("fits, {0:f2}x slower than {1}",
                              candidate.stepSeconds / best->stepSeconds,
                              best->name())
                    .str();
    os << llvm::formatv("{0,-28} {1,14} {2,12:f3} {3,12:f3}  {4}\n",
                        candidate.name(), formatBytes(candidate.peakBytes),
                        candidate.stepSeconds * 1e3,
                        candidate.exposedSeconds * 1e3, verdict);
  }
  if (llvm::none_of(candidates,
                    [](const AutoCandidate &c) { return c.offload; }))
    os << llvm::formatv("{0,-28} {1,14} {2,12} {3,12}  {4}\n", "+offload", "-",
                        "-", "-", "not tried: every candidate fits without it");
  else if (best && best->offload)
    os << llvm::formatv("host pool per rank for {0}: {1}\n", best->name(),
                        formatBytes(best->hostBytes));
  if (!best) {
    const AutoCandidate *smallest = &candidates.front();
    for (const AutoCandidate &candidate : candidates)
      if (candidate.peakBytes < smallest->peakBytes)
        smallest = &candidate;
    return module.emitError()
           << "auto: nothing fits " << options.memoryPerRank
           << " bytes per rank; the smallest peak is " << smallest->name()
           << "'s " << smallest->peakBytes << " bytes, "
           << smallest->peakBytes - options.memoryPerRank << " bytes short";
  }
  return *best;
}
