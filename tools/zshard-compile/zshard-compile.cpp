//===- zshard-compile.cpp - training step -> artifact ---------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs the whole pipeline on a training step and writes the artifact that
/// zshard-run loads: `OUT.zsa/step.so` and `OUT.zsa/manifest.json`.
///
//===----------------------------------------------------------------------===//

#include "CompileDiagnostics.h"
#include "CompileEval.h"
#include "CompileOptions.h"

#include "zshard/Analysis/CostModel.h"
#include "zshard/Analysis/MemoryPlan.h"
#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/InitAll.h"
#include "zshard/Pipelines/AutoShard.h"
#include "zshard/Pipelines/Pipelines.h"
#include "zshard/Pipelines/ShardStep.h"
#include "zshard/Target/Artifact.h"
#include "zshard/Transforms/Passes.h"
#include "zshard/abi/ManifestSchema.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>
#include <limits>

using namespace mlir;
using namespace mlir::zshard;
using namespace zshard_compile;

namespace {
struct StopWatch {
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }
};

/// Writes `text` to `path`, or stdout for "-".
LogicalResult writeText(StringRef path, StringRef text) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file) {
    printError(StringRef(error).trim());
    return failure();
  }
  file->os() << text;
  file->keep();
  return success();
}

/// Completes `request` with what only the step tells: that it is not
/// sharded yet, and the units' pattern (found in the parameter names, or
/// the given one checked against them).
LogicalResult resolveUnits(ModuleOp module, const StepContract &contract,
                           StringRef input, ShardingRequest &request) {
  auto error = [](const Twine &message) {
    printError(message);
    return failure();
  };
  for (UnitOp unit : module.getOps<UnitOp>())
    return error(input + " is already sharded (it declares zshard.unit @" +
                 unit.getSymName() +
                 "): --strategy and --auto take an unsharded step");
  SmallVector<std::string> names;
  for (const StepArgument &argument : contract.getArguments()) {
    if (argument.role == ArgRole::ParamShard)
      return error(input + " is already sharded (argument '" + argument.name +
                   "' is a parameter shard): --strategy and --auto take an "
                   "unsharded step");
    if (argument.role == ArgRole::Param)
      names.push_back(argument.name);
  }
  SmallVector<std::string> blocks = findParameterBlocks(names);
  std::string found = blocks.empty()
                          ? std::string("the step has no indexed blocks (use "
                                        "--wrap size=MIN_PARAMS)")
                          : "its blocks are " + llvm::join(blocks, ", ");
  ShardStepOptions &options = request.options;
  const ModuleClasses &classes = contract.getModuleClasses();
  if (!classes.empty())
    found += "; its module classes are " +
             llvm::join(classes.getClassNames(), ", ");
  if (request.patternGiven) {
    // Items that are module classes (FSDP's transformer_layer_cls) stand
    // for the paths of their modules; the others are path patterns.
    // The classes' patterns come first, innermost first, then the paths.
    SmallVector<StringRef> items;
    StringRef(options.pattern).split(items, ',', -1, false);
    SmallVector<std::string> classNames, paths;
    for (StringRef item : items)
      (classes.hasClass(item.trim()) ? classNames : paths)
          .push_back(item.trim().str());
    SmallVector<std::string> patterns;
    if (!classNames.empty())
      patterns = classes.getPatterns(classNames);
    llvm::append_range(patterns, paths);
    for (StringRef pattern : patterns) {
      if (!parsePathPattern(pattern))
        return error(request.patternOption + ": bad module path pattern '" +
                     pattern + "' (dotted names, indices and <i>, such as "
                     "h.<i>, or a module class; " + found + ")");
      if (llvm::none_of(names, [&](const std::string &name) {
            return matchesParameter(pattern, name);
          }))
        return error(request.patternOption + ": '" + pattern +
                     "' matches no parameter of " + input + "; " + found);
    }
    options.pattern = llvm::join(patterns, ",");
    return success();
  }
  if (!blocks.empty()) {
    // Per-block units; the blocks that hold the most parameters are the
    // ones checkpointed.
    options.pattern = llvm::join(blocks, ",");
    return success();
  }
  if (options.remat != "none")
    return error("--remat needs blocks to checkpoint, and " + input +
                 " has no indexed modules (such as h.<i>)");
  // Without blocks the whole model is one unit, as FSDP wraps a model
  // without an auto-wrap policy.
  if (options.wrap == WrapPolicy::Transformer) {
    options.wrap = WrapPolicy::Size;
    options.minParams = std::numeric_limits<int64_t>::max();
  }
  return success();
}

/// Prints `module` with its locations (the module paths the contract
/// reads), inline as zshard-opt prints them by default, so that the output
/// is a step zshard-compile takes again.
std::string printWithLocations(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  flags.useLocalScope();
  module->print(os, flags);
  os << "\n";
  return text;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  std::optional<CompileOptions> parsed = parseCompileOptions(argc, argv);
  if (!parsed)
    return 1;
  const CompileOptions &opts = *parsed;
  StringRef input = opts.input == "-" ? "<stdin>" : StringRef(opts.input);

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name their location; a whole step printed after them would
  // bury the message.
  context.printOpOnDiagnostic(opts.printOpOnDiagnostic);
  CompileDiagnostics diagnostics(&context, llvm::errs());
  // A failure that diagnostics explained needs no second line.
  auto fail = [&](const Twine &message) {
    if (diagnostics.getNumErrors() == 0)
      printError(message);
    return 1;
  };
  // Where the text emits write: -o if given, else stdout.
  std::string textOutput = opts.outputGiven ? opts.output : "-";

  StopWatch total;
  std::string error;
  auto file = openInputFile(opts.input, &error);
  if (!file)
    return fail(StringRef(error).trim());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + input);
  double parseSeconds = total.seconds();

  // The contract is checked and read before lowering drops its attributes.
  PassManager verify(&context);
  verify.addPass(createVerifyContract());
  if (failed(verify.run(*module)))
    return fail(input + " is not a valid training step");
  if (opts.sharding) {
    ShardingRequest request = *opts.sharding;
    StepContract unsharded(*module);
    if (failed(unsharded.run()))
      return fail("cannot read the step contract of " + input);
    if (failed(resolveUnits(*module, unsharded, input, request)))
      return 1;
    if (request.automatic) {
      AutoShardOptions autoOptions;
      autoOptions.sharding = request.options;
      autoOptions.memoryPerRank = request.memoryPerRank;
      if (!lookupCostPresets(opts, autoOptions.device, autoOptions.link))
        return 1;
      // The table goes where it does not mix with a text emit on stdout.
      bool textOnStdout = opts.emit != Emit::Artifact &&
                          opts.emit != Emit::MemoryPlan && !opts.outputGiven;
      if (failed(autoShard(*module, autoOptions,
                           textOnStdout ? llvm::errs() : llvm::outs())))
        return fail("--auto found no strategy for " + input);
    } else {
      PassManager sharding(&context);
      if (opts.timing)
        sharding.enableTiming();
      buildShardStepPipeline(sharding, request.options);
      if (failed(sharding.run(*module)))
        return fail("sharding " + input + " failed");
    }
    if (opts.emit == Emit::ShardedMLIR)
      return failed(writeText(textOutput, printWithLocations(*module))) ? 1 : 0;
  } else if (opts.microbatches > 1) {
    PassManager accumulate(&context);
    AccumulateOptions accumulateOptions;
    accumulateOptions.microbatches = opts.microbatches;
    accumulate.addPass(createAccumulate(accumulateOptions));
    if (failed(accumulate.run(*module)))
      return fail("accumulating microbatches of " + input + " failed");
  }
  StepContract contract(*module);
  if (failed(contract.run()))
    return fail("cannot read the step contract of " + input);
  bool planOnly = opts.emit == Emit::MemoryPlan;
  if ((*module)->hasAttr("zshard.shapes_only") && !planOnly)
    return fail(input + " is a shapes-only step (zshard.shapes_only): it "
                        "is meant for planning, not for running (use "
                        "--emit=memory-plan)");
  if (opts.costReport) {
    DeviceModel device;
    LinkModel link;
    if (!lookupCostPresets(opts, device, link))
      return 1;
    FailureOr<CostReport> cost =
        CostModel(device, link).estimate(contract.getStep());
    if (failed(cost))
      return fail("cannot cost " + input);
    llvm::outs() << "cost model of " << input << " (" << device.name << ", "
                 << link.name << "): " << cost->toJSON() << "\n";
  }
  std::string stepName = contract.getStep().getSymName().str();
  unsigned numBuffers =
      contract.getArguments().size() + contract.getResults().size();
  llvm::json::Object manifest = buildManifest(contract, *module);
  // --eval derives its entry from the step as it is here, before lowering.
  OwningOpRef<ModuleOp> evalModule;
  if (opts.eval)
    evalModule = module->clone();

  StopWatch lowerTimer;
  PassManager lower(&context);
  if (opts.timing)
    lower.enableTiming();
  buildBufferizePipeline(lower, opts);
  if (failed(lower.run(*module)))
    return fail("lowering " + input + " failed");
  auto step = module->lookupSymbol<func::FuncOp>(stepName);
  if (!step)
    return fail("lowering " + input + " lost the step " + stepName);
  SmallVector<bool> inPlace = getInPlaceResults(contract, step);
  recordInPlaceResults(manifest, contract, inPlace);
  std::string signature = getSignatureHash(contract, inPlace);
  if (opts.memoryReport || planOnly || !opts.memoryJSON.empty()) {
    MemoryPlan plan(step);
    if (failed(plan.run()))
      return fail("cannot plan the memory of " + input);
    addRuntimeHeldBuffers(plan, contract, step);
    if (opts.memoryReport || planOnly)
      llvm::outs() << "memory plan per rank of " << input << ":\n"
                   << formatMemoryTable(plan);
    if (!opts.memoryJSON.empty() &&
        failed(writeText(opts.memoryJSON, plan.toJSON() + "\n")))
      return 1;
    if (planOnly)
      return evalModule && failed(compileEval(*evalModule, opts, input,
                                              /*planOnly=*/true, "", manifest))
                 ? 1
                 : 0;
  }
  PassManager toLLVM(&context);
  if (opts.timing)
    toLLVM.enableTiming();
  buildTargetPipeline(toLLVM, opts);
  if (opts.target == Target::CUDA)
    recordTarget(manifest, "cuda", opts.cudaChip);
  else
    recordTarget(manifest, "cpu");
  if (failed(toLLVM.run(*module)))
    return fail("lowering " + input + " failed");
  double lowerSeconds = lowerTimer.seconds();

  if (opts.emit == Emit::LoweredMLIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return failed(writeText(textOutput, text)) ? 1 : 0;
  }

  SharedObjectOptions soOptions;
  soOptions.optLevel = opts.optLevel;
  soOptions.cpu = opts.cpu;
  StopWatch codegenTimer;
  SmallString<128> dir(opts.output);
  std::string llvmIR;
  StepObjectFiles objects;
  if (opts.emit == Emit::LLVMIR) {
    for (std::string *path : {&objects.code, &objects.glue}) {
      SmallString<128> temporary;
      if (auto ec =
              llvm::sys::fs::createTemporaryFile("zshard-step", "o", temporary))
        return fail("cannot create a temporary file: " + ec.message());
      *path = temporary.str().str();
    }
  } else {
    if (auto ec = llvm::sys::fs::create_directories(dir))
      return fail("cannot create " + dir + ": " + ec.message());
    objects = getStepObjectFiles(dir, "step");
  }
  LogicalResult emitted =
      emitObjectFiles(*module, stepName, numBuffers, signature, objects,
                      soOptions, opts.emit == Emit::LLVMIR ? &llvmIR : nullptr);
  if (opts.emit == Emit::LLVMIR) {
    llvm::sys::fs::remove(objects.code);
    llvm::sys::fs::remove(objects.glue);
  }
  if (failed(emitted))
    return fail("code generation failed");
  if (opts.emit == Emit::LLVMIR)
    return failed(writeText(textOutput, llvmIR)) ? 1 : 0;

  SmallString<128> soPath(dir);
  llvm::sys::path::append(soPath, ::zshard_abi::manifest::kDefaultLibrary);
  LogicalResult linked =
      linkSharedObject({objects.code, objects.glue}, soPath, error);
  llvm::sys::fs::remove(objects.code);
  llvm::sys::fs::remove(objects.glue);
  if (failed(linked))
    return fail(error);
  double codegenSeconds = codegenTimer.seconds();
  if (evalModule && failed(compileEval(*evalModule, opts, input,
                                       /*planOnly=*/false, dir, manifest)))
    return 1;

  SmallString<128> manifestPath(dir);
  llvm::sys::path::append(manifestPath, ::zshard_abi::manifest::kFileName);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  if (failed(writeText(manifestPath, text)))
    return 1;
  if (opts.timing)
    llvm::errs() << llvm::formatv(
        "{{\"parse_s\": {0:f3}, \"lower_s\": {1:f3}, \"codegen_s\": {2:f3}, "
        "\"total_s\": {3:f3}}\n",
        parseSeconds, lowerSeconds, codegenSeconds, total.seconds());
  return 0;
}
