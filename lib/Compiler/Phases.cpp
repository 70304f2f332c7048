//===- Phases.cpp - the compile phases and their passes -------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Compiler/Compiler.h"

#include "zshard/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::zshard;

namespace {
const CompilePhase kPhases[] = {
    CompilePhase::Verify, CompilePhase::Remat,    CompilePhase::Units,
    CompilePhase::Shard,  CompilePhase::Schedule, CompilePhase::Plan,
    CompilePhase::Lower,  CompilePhase::Emit};
} // namespace

StringRef zshard::getCompilePhaseName(CompilePhase phase) {
  switch (phase) {
  case CompilePhase::Verify:
    return "verify";
  case CompilePhase::Remat:
    return "remat";
  case CompilePhase::Units:
    return "units";
  case CompilePhase::Shard:
    return "shard";
  case CompilePhase::Schedule:
    return "schedule";
  case CompilePhase::Plan:
    return "plan";
  case CompilePhase::Lower:
    return "lower";
  case CompilePhase::Emit:
    return "emit";
  }
  llvm_unreachable("unknown compile phase");
}

std::optional<CompilePhase> zshard::parseCompilePhase(StringRef name) {
  for (CompilePhase phase : kPhases)
    if (getCompilePhaseName(phase) == name)
      return phase;
  return std::nullopt;
}

void zshard::populatePhase(OpPassManager &pm, CompilePhase phase,
                           const CompileOptions &options) {
  // Without sharding, the remat phase accumulates microbatches only.
  ShardStepOptions unsharded;
  unsharded.microbatches = options.microbatches;
  const ShardStepOptions *sharding =
      options.sharding ? &options.sharding->options : nullptr;
  switch (phase) {
  case CompilePhase::Verify:
    // Steps that carry their module paths as name locations compile too.
    pm.addPass(createPathsFromLocations());
    pm.addPass(createVerifyContract());
    return;
  case CompilePhase::Remat:
    buildRematStage(pm, sharding ? *sharding : unsharded);
    return;
  case CompilePhase::Units:
    if (sharding)
      buildUnitsStage(pm, *sharding);
    return;
  case CompilePhase::Shard:
    if (sharding)
      buildShardStage(pm, *sharding);
    return;
  case CompilePhase::Schedule:
    if (sharding)
      buildScheduleStage(pm, *sharding);
    return;
  case CompilePhase::Plan: {
    // The ABI facts the manifest is written from, while the contract and
    // the units are still in the IR.
    RecordABIOptions abi;
    abi.target = options.target;
    if (options.target == StepTarget::CUDA)
      abi.chip = options.cuda.chip;
    pm.addPass(createRecordABI(abi));
    BufferizeOptions bufferize = options.bufferize;
    if (options.target == StepTarget::CUDA)
      adaptBufferizeOptionsToCUDA(bufferize, options.cuda.reductionThreads);
    buildBufferizeStepPipeline(pm, bufferize);
    return;
  }
  case CompilePhase::Lower: {
    if (options.target != StepTarget::CUDA) {
      buildBufferizedStepToLLVMPipeline(pm);
      return;
    }
    CUDATargetOptions cuda = options.cuda;
    if (cuda.toolkit.empty())
      cuda.toolkit = findCUDAToolkit();
    if (cuda.format == "auto")
      cuda.format = getBestCUDABinaryFormat(cuda.toolkit);
    buildBufferizedStepToCUDAPipeline(pm, cuda);
    return;
  }
  case CompilePhase::Emit:
    return;
  }
}

CompileOptions CompilePipelineOptions::getCompileOptions() const {
  CompileOptions options;
  ShardingRequest request;
  request.options = getOptions();
  request.patternGiven = true;
  options.sharding = request;
  options.microbatches = request.options.microbatches;
  options.bufferize = getBufferizeOptions();
  options.target = target;
  options.cuda = getTargetOptions();
  return options;
}

void zshard::registerCompilePipeline() {
  // Registered by hand rather than with PassPipelineRegistration so that a
  // misspelt phase is an error, not a pipeline without it.
  auto build = [](OpPassManager &pm, StringRef text,
                  function_ref<LogicalResult(const Twine &)> errorHandler)
      -> LogicalResult {
    std::unique_ptr<CompilePipelineOptions> pipeline =
        CompilePipelineOptions::createFromString(text);
    if (!pipeline)
      return failure();
    SmallVector<CompilePhase> phases;
    for (StringRef name : pipeline->phases) {
      std::optional<CompilePhase> phase = parseCompilePhase(name.trim());
      if (!phase || *phase == CompilePhase::Emit)
        return errorHandler("zshard-pipeline: '" + name +
                            "' is not a phase with passes: verify, remat, "
                            "units, shard, schedule, plan, lower");
      phases.push_back(*phase);
    }
    if (phases.empty())
      phases.assign(std::begin(kPhases), std::end(kPhases) - 1);
    CompileOptions options = pipeline->getCompileOptions();
    for (CompilePhase phase : phases)
      populatePhase(pm, phase, options);
    return success();
  };
  registerPassPipeline(
      "zshard-pipeline",
      "Run phases of zshard-compile (verify, remat, units, shard, schedule, "
      "plan, lower) with the passes zshard-compile runs for them",
      build,
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(CompilePipelineOptions());
      });
}
