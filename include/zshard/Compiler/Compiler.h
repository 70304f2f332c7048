//===- Compiler.h - a training step to an artifact, in phases ---*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The compile library: the one pipeline from a training step to an
/// artifact, as explicit phases over one options struct (the shape of
/// CIRCT's firtool library and IREE's `--compile-to`). zshard-compile parses
/// its command line into CompileOptions and calls compile(); zshard-opt's
/// `--zshard-pipeline` runs the same phases' passes.
///
///   verify    the contract (zshard-verify-contract)
///   remat     what rewrites the unsharded step: checkpointing (zshard-remat)
///             and gradient accumulation (zshard-accumulate)
///   units     zshard-form-units
///   shard     zshard-shard
///   schedule  zshard-async, zshard-prefetch, zshard-offload
///   plan      bufferization (zshard-bufferize-step), and the memory plan
///             read from the bufferized step
///   lower     the bufferized step to the LLVM dialect, CPU or CUDA
///   emit      LLVM code generation, the shared objects and the manifest
///
/// Checkpointing comes before units: it runs on the unsharded step, so that
/// the backward gather of a unit covers the parameters its recomputation
/// reads (docs/architecture.md).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_COMPILER_COMPILER_H
#define ZSHARD_COMPILER_COMPILER_H

#include "zshard/Analysis/CostModel.h"
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"
#include "zshard/Pipelines/Pipelines.h"
#include "zshard/Pipelines/ShardStep.h"
#include "zshard/Support/EnumOption.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <optional>
#include <string>

namespace mlir {
namespace zshard {

/// The phases of compile(), in the order they run.
enum class CompilePhase {
  Verify,
  Remat,
  Units,
  Shard,
  Schedule,
  Plan,
  Lower,
  Emit
};

/// The spelling of `phase` (`verify`, ..., `emit`).
StringRef getCompilePhaseName(CompilePhase phase);

/// The phase spelled `name`; std::nullopt for anything else.
std::optional<CompilePhase> parseCompilePhase(StringRef name);

} // namespace zshard
} // namespace mlir

ZSHARD_LISTING_ENUM_PARSER(mlir::zshard::CompilePhase)

namespace mlir {
namespace zshard {

/// What sharding an unsharded step was asked for (zshard-compile
/// --strategy or --auto).
struct ShardingRequest {
  /// --auto: the strategy, checkpointing and offloading are chosen.
  bool automatic = false;
  /// The passes' options; for --auto what all candidates share.
  ShardStepOptions options;
  /// Whether the units' pattern was given (--wrap transformer=PATTERN,
  /// --auto-pattern) rather than to be found in the step.
  bool patternGiven = false;
  /// The option that gave it, for messages.
  std::string patternOption;
  /// --auto: bytes per rank.
  int64_t memoryPerRank = 0;
};

/// Everything compile() does, as zshard-compile's options give it.
struct CompileOptions {
  /// How messages name the step (a file name, `<stdin>`).
  std::string inputName = "the step";

  /// Sharding of an unsharded step; none: the step is compiled as it is.
  std::optional<ShardingRequest> sharding;
  /// Gradient accumulation without sharding (with sharding it is in
  /// `sharding->options`).
  int64_t microbatches = 1;

  /// plan: the bufferization, shared by both targets.
  BufferizeOptions bufferize;
  /// lower: the device, and the CUDA target's options (`format` "auto":
  /// the best binary the toolkit builds; `toolkit` "": the one found).
  StepTarget target = StepTarget::CPU;
  CUDATargetOptions cuda;

  /// emit: LLVM's optimisation level and CPU ("" or "native": this one).
  unsigned optLevel = 3;
  std::string cpu;
  /// emit: the artifact directory.
  std::string outputDir = "step.zsa";
  /// emit: the LLVM IR into CompileResult::llvmIR, no artifact.
  bool emitLLVMIR = false;
  /// emit (and plan): also the forward-only eval entry (eval.so).
  bool eval = false;

  /// Reports: the memory plan as a table on stdout and as JSON to a file,
  /// the cost model's figures for `costDevice` over `costLink` (also
  /// --auto's), pass timings.
  bool memoryReport = false;
  std::string memoryJSON;
  bool costReport = false;
  DevicePreset costDevice = DevicePreset::H100;
  LinkPreset costLink = LinkPreset::IB;
  bool timing = false;
  /// --auto prints its table to stderr (stdout carries the output).
  bool autoTableToStderr = false;
};

/// What compile() hands back besides the module.
struct CompileResult {
  /// emitLLVMIR: the code's module, then the glue's.
  std::string llvmIR;
  /// Seconds spent in plan and lower, and in emit.
  double lowerSeconds = 0;
  double codegenSeconds = 0;
};

/// Adds the passes of `phase` to `pm` (on the module). The sharding phases
/// take `options.sharding` as resolved (the units' pattern found, --auto's
/// choice made: what compile() does before them); `emit` has no passes.
void populatePhase(OpPassManager &pm, CompilePhase phase,
                   const CompileOptions &options);

/// Runs the phases on `module` up to and including `stopAfter`, leaving the
/// module as that phase made it (emit: the artifact in
/// `options.outputDir`). Prints the reports the options ask for; fails
/// after one error line (a diagnostic) on any problem.
LogicalResult compile(ModuleOp module, const CompileOptions &options,
                      CompilePhase stopAfter, CompileResult *result = nullptr);

/// The options of `zshard-pipeline` (zshard-opt): the phases to run and the
/// options of their passes.
struct CompilePipelineOptions
    : public CUDATargetPipelineOptions<
          CompilePipelineOptions,
          BufferizePipelineOptions<
              CompilePipelineOptions,
              ShardStepPipelineOptionsBase<CompilePipelineOptions>>> {
  ListOption<std::string> phases{
      *this, "phases",
      llvm::cl::desc("Phases to run, in this order: verify, remat, units, "
                     "shard, schedule, plan, lower (default: all of them; "
                     "emit is zshard-compile's)")};
  Option<StepTarget> target{
      *this, "target", llvm::cl::desc("lower: the device"),
      llvm::cl::init(StepTarget::CPU),
      llvm::cl::values(clEnumValN(StepTarget::CPU, "cpu", "host code"),
                       clEnumValN(StepTarget::CUDA, "cuda", "CUDA kernels"))};

  /// These options as CompileOptions (sharding with the pattern given).
  CompileOptions getCompileOptions() const;
};

/// Registers `zshard-pipeline` with the global registry.
void registerCompilePipeline();

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_COMPILER_COMPILER_H
