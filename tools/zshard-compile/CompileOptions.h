//===- CompileOptions.h - zshard-compile's command line ---------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The command line of zshard-compile, read and checked: every misuse that
/// can be seen without the input (an option given twice, an out-of-range
/// value, an unknown -mcpu, --ranks without a strategy, ...) is one line
/// on stderr before anything is compiled.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEOPTIONS_H
#define ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEOPTIONS_H

#include "zshard/Analysis/CostModel.h"
#include "zshard/Pipelines/ShardStep.h"

#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>

namespace zshard_compile {

enum class Emit { Artifact, ShardedMLIR, LoweredMLIR, LLVMIR, MemoryPlan };
enum class Target { CPU, CUDA };

/// What sharding an unsharded step was asked for (--strategy or --auto).
struct ShardingRequest {
  /// --auto: the strategy, checkpointing and offloading are chosen.
  bool automatic = false;
  /// The passes' options; for --auto what all candidates share.
  mlir::zshard::ShardStepOptions options;
  /// Whether the units' pattern was given (--wrap transformer=PATTERN,
  /// --auto-pattern) rather than to be found in the step.
  bool patternGiven = false;
  /// The option that gave it, for messages.
  std::string patternOption;
  /// --auto: bytes per rank, device and link.
  int64_t memoryPerRank = 0;
};

/// zshard-compile's options, checked.
struct CompileOptions {
  std::string input;
  /// -o; for the text emits, stdout when not given.
  std::string output;
  bool outputGiven = false;
  Emit emit = Emit::Artifact;
  unsigned optLevel = 3;
  std::string cpu;
  bool fuse = true;
  bool runtimeMatmul = true;
  bool timing = false;
  Target target = Target::CPU;
  std::string cudaChip;
  std::string cudaFormat;
  bool memoryReport = false;
  std::string memoryJSON;
  /// --cost-report, and --auto, use these.
  bool costReport = false;
  std::string costDevice;
  std::string costLink;
  std::optional<ShardingRequest> sharding;
  /// --eval: also the forward-only eval entry (eval.so, CompileEval.h).
  bool eval = false;
  /// --microbatches: gradient accumulation (also in `sharding`'s options).
  int64_t microbatches = 1;
  /// --mlir-print-op-on-diagnostic was given.
  bool printOpOnDiagnostic = false;
};

/// Parses and checks the command line. On a misuse prints one line to
/// stderr and returns std::nullopt (exit status 1); with no input on a
/// terminal prints the usage instead.
std::optional<CompileOptions> parseCompileOptions(int argc, char **argv);

/// The device and link presets named by --device and --link; prints one
/// line and returns false when one is unknown.
bool lookupCostPresets(const CompileOptions &options,
                       mlir::zshard::DeviceModel &device,
                       mlir::zshard::LinkModel &link);

/// Adds the bufferization of a step to `pm` with the options' lowering
/// choices (--fuse, --runtime-matmul): the step and its eval entry share it.
void buildBufferizePipeline(mlir::OpPassManager &pm,
                            const CompileOptions &options);

/// Adds the lowering of a bufferized step to `pm` for the target the options
/// name (--target, --cuda-chip, --cuda-format): the step and its eval entry
/// go through the same one.
void buildTargetPipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// Prints `zshard-compile: error: MESSAGE` to stderr.
void printError(const llvm::Twine &message);

} // namespace zshard_compile

#endif // ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEOPTIONS_H
