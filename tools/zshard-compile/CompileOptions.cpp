//===- CompileOptions.cpp - zshard-compile's command line -----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "CompileOptions.h"

#include "zshard/Pipelines/AutoShard.h"
#include "zshard/Support/ByteSize.h"
#include "zshard/Target/Artifact.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Process.h"

using namespace mlir;
using namespace mlir::zshard;
using namespace zshard_compile;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory ioCategory("Input and output");
cl::OptionCategory shardCategory("Sharding (of an unsharded step)");
cl::OptionCategory codegenCategory("Code generation");
cl::OptionCategory reportCategory("Reports");

/// Reads a strategy in zshard's or FSDP's spelling (parseShardingStrategy);
/// the values listed in --help are zshard's.
struct StrategyParser : public cl::parser<ShardingStrategy> {
  using cl::parser<ShardingStrategy>::parser;
  bool parse(cl::Option &option, StringRef, StringRef arg,
             ShardingStrategy &value) {
    if (std::optional<ShardingStrategy> strategy = parseShardingStrategy(arg)) {
      value = *strategy;
      return false;
    }
    return option.error("'" + arg +
                        "' is not a strategy: no_shard, zero1, "
                        "shard_grad_op, full_shard, hybrid_shard, "
                        "hybrid_shard_zero2 (or FSDP's NO_SHARD, ...)");
  }
};

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<training step .mlir, - for stdin>"),
                               cl::init("-"), cl::cat(ioCategory));
cl::opt<std::string> outputPath("o",
                                cl::desc("Output: the artifact directory "
                                         "(default step.zsa), or the file "
                                         "of a text --emit (default stdout)"),
                                cl::value_desc("path"), cl::init("step.zsa"),
                                cl::cat(ioCategory));
cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Artifact),
    cl::values(clEnumValN(Emit::Artifact, "artifact",
                          "the artifact directory (default)"),
               clEnumValN(Emit::ShardedMLIR, "sharded-mlir",
                          "the step after --strategy / --auto, on tensors"),
               clEnumValN(Emit::LoweredMLIR, "lowered-mlir",
                          "the step in the LLVM dialect"),
               clEnumValN(Emit::LLVMIR, "llvm-ir", "the optimised LLVM IR"),
               clEnumValN(Emit::MemoryPlan, "memory-plan",
                          "only the memory plan (no code generation; "
                          "shapes-only steps are accepted)")),
    cl::cat(ioCategory));

cl::opt<CompilePhase> compileTo(
    "compile-to",
    cl::desc("Stop after this phase and write the step as it left it (-o "
             "or stdout); emit (the default) writes the artifact"),
    cl::values(
        clEnumValN(CompilePhase::Verify, "verify", "the contract checked"),
        clEnumValN(CompilePhase::Remat, "remat",
                   "checkpointing and accumulation, on the unsharded step"),
        clEnumValN(CompilePhase::Units, "units", "zshard.unit declared"),
        clEnumValN(CompilePhase::Shard, "shard",
                   "state sharded, collectives "
                   "inserted"),
        clEnumValN(CompilePhase::Schedule, "schedule",
                   "async collectives, prefetch, offload"),
        clEnumValN(CompilePhase::Plan, "plan",
                   "bufferized, as the memory plan reads it"),
        clEnumValN(CompilePhase::Lower, "lower", "the LLVM dialect"),
        clEnumValN(CompilePhase::Emit, "emit", "the artifact (default)")),
    cl::cat(ioCategory));

cl::opt<bool> evalEntry(
    "eval",
    cl::desc("Also emit the forward-only eval entry (eval.so: the loss of "
             "the step, sharded the same way, without backward, optimizer or "
             "gradient collectives), for zshard-run --eval-data"),
    cl::cat(ioCategory));

cl::opt<ShardingStrategy, false, StrategyParser> strategy(
    "strategy",
    cl::desc("Shard the step (FSDP's names, such as FULL_SHARD, in any case "
             "too)"),
    cl::values(
        clEnumValN(ShardingStrategy::NoShard, "no_shard",
                   "DDP: whole state, gradients all-reduced"),
        clEnumValN(ShardingStrategy::Zero1, "zero1",
                   "ZeRO-1: optimizer state sharded"),
        clEnumValN(ShardingStrategy::ShardGradOp, "shard_grad_op",
                   "ZeRO-2: gradients and optimizer state sharded"),
        clEnumValN(ShardingStrategy::FullShard, "full_shard",
                   "ZeRO-3: parameters too"),
        clEnumValN(ShardingStrategy::HybridShard, "hybrid_shard",
                   "full_shard in a group, replicated over --replicas"),
        clEnumValN(ShardingStrategy::HybridShardZero2, "hybrid_shard_zero2",
                   "shard_grad_op in a group, replicated over --replicas")),
    cl::cat(shardCategory));
cl::opt<int64_t> ranks("ranks",
                       cl::desc("Ranks to shard over (--strategy, --auto)"),
                       cl::value_desc("N"), cl::cat(shardCategory));
cl::opt<int64_t>
    replicas("replicas",
             cl::desc("Hybrid strategies: replica groups (divides --ranks)"),
             cl::value_desc("R"), cl::cat(shardCategory));
cl::opt<std::string>
    wrap("wrap",
         cl::desc("Units: one per module matching PATTERN (<i> an index; "
                  "default: the step's blocks, e.g. h.<i>) or of class CLASS "
                  "(as the frontend recorded it, e.g. LlamaDecoderLayer), or "
                  "of at least MIN_PARAMS elements"),
         cl::value_desc("transformer=PATTERN|CLASS,...|size=MIN_PARAMS"),
         cl::cat(shardCategory));
cl::list<std::string> prefetch(
    "prefetch",
    cl::desc("Schedule: none (synchronous collectives), or any of "
             "forward-depth=N (default 1), backward=pre|post|none (pre), "
             "max-inflight=N (0: no limit), bucket-bytes=B (0)"),
    cl::value_desc("none|KEY=VALUE,..."), cl::CommaSeparated,
    cl::cat(shardCategory));
cl::opt<std::string>
    remat("remat",
          cl::desc("Activation checkpointing of the blocks (default none)"),
          cl::value_desc("none|all|every=K|selective|budget=BYTES"),
          cl::cat(shardCategory));
cl::opt<bool>
    autoShard("auto",
              cl::desc("Choose the strategy, checkpointing and offloading for "
                       "--ranks under --memory-per-rank (memory plan and cost "
                       "model for --device over --link)"),
              cl::cat(shardCategory));
cl::opt<std::string> autoMemory("memory-per-rank",
                                cl::desc("--auto: memory per rank"),
                                cl::value_desc("bytes, e.g. 80GiB"),
                                cl::cat(shardCategory));
cl::opt<std::string>
    autoPattern("auto-pattern",
                cl::desc("--auto: module paths of units and checkpointed "
                         "blocks (as --wrap transformer=PATTERN)"),
                cl::value_desc("PATTERN"), cl::cat(shardCategory));
cl::opt<int64_t> microbatches(
    "microbatches",
    cl::desc("Gradient accumulation: the step takes K times its batch, runs "
             "forward and backward per microbatch of the batch it was "
             "written for and updates once (default 1)"),
    cl::value_desc("K"), cl::init(1), cl::cat(shardCategory));
cl::opt<MicrobatchGathers> microbatchGathers(
    "microbatch-gathers",
    cl::desc("--strategy with --microbatches: gather parameters in every "
             "microbatch (default) or once for all of them"),
    cl::values(clEnumValN(MicrobatchGathers::Regather, "regather",
                          "gather in every microbatch (FSDP's no_sync)"),
               clEnumValN(MicrobatchGathers::Keep, "keep",
                          "gather once, keep through all microbatches")),
    cl::cat(shardCategory));
cl::opt<UnitFloatType> bufferDType(
    "buffer-dtype",
    cl::desc("Round each buffer to this type for compute (FSDP's "
             "MixedPrecision buffer_dtype; default: the buffer's own)"),
    cl::init(UnitFloatType::Own), getBufferTypeValues(),
    cl::cat(shardCategory));

cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimisation level, 0 to 3"),
                           cl::Prefix, cl::init(3), cl::cat(codegenCategory));
cl::opt<std::string> cpu("mcpu",
                         cl::desc("CPU to compile for (default: this one)"),
                         cl::value_desc("cpu"), cl::init(""),
                         cl::cat(codegenCategory));
cl::opt<bool> noFuse("no-fuse", cl::desc("Do not fuse elementwise ops"),
                     cl::cat(codegenCategory));
cl::opt<bool>
    noRuntimeMatmul("no-runtime-matmul",
                    cl::desc("Lower matrix products to loops, not BLAS"),
                    cl::cat(codegenCategory));
cl::opt<StepTarget> target(
    "target", cl::desc("Device the step runs on"), cl::init(StepTarget::CPU),
    cl::values(clEnumValN(StepTarget::CPU, "cpu", "host code (default)"),
               clEnumValN(StepTarget::CUDA, "cuda",
                          "CUDA kernels in an embedded GPU binary, cuBLAS "
                          "and the runtime's device memory")),
    cl::cat(codegenCategory));
cl::opt<std::string> cudaChip("cuda-chip",
                              cl::desc("--target=cuda: SM architecture"),
                              cl::init("sm_90"), cl::cat(codegenCategory));
cl::opt<std::string> cudaFormat(
    "cuda-format",
    cl::desc("--target=cuda: embedded binary, auto (fatbin when the CUDA "
             "toolkit has ptxas and fatbinary, else isa), isa (PTX), bin "
             "(cubin) or fatbin"),
    cl::init("auto"), cl::cat(codegenCategory));

cl::opt<bool> memoryReport(
    "memory-report",
    cl::desc("Print the static per-rank memory plan (peak by category)"),
    cl::cat(reportCategory));
cl::opt<std::string> memoryJSON(
    "memory-json",
    cl::desc("Write the memory plan (peaks and live-bytes timeline) as JSON"),
    cl::value_desc("file"), cl::init(""), cl::cat(reportCategory));
cl::opt<bool> costReport(
    "cost-report",
    cl::desc("Print the predicted step time and exposed communication for "
             "--device over --link (the cost model)"),
    cl::cat(reportCategory));
cl::opt<DevicePreset> costDevice("device", cl::desc("Cost model device preset"),
                                 getDevicePresetValues(),
                                 cl::init(DevicePreset::H100),
                                 cl::cat(reportCategory));
cl::opt<LinkPreset> costLink("link", cl::desc("Cost model link preset"),
                             getLinkPresetValues(), cl::init(LinkPreset::IB),
                             cl::cat(reportCategory));
cl::opt<bool> timing("timing", cl::desc("Print pass and phase timings"),
                     cl::cat(reportCategory));

const char *const kUsage =
    "usage: zshard-compile STEP.mlir [--strategy STRATEGY --ranks N] "
    "[-o STEP.zsa]\n"
    "       zshard-compile - < STEP.mlir\n"
    "(zshard-compile --help lists the options)\n";

/// An option of ours given more than once (the last would silently win).
const cl::Option *findRepeatedOption() {
  const cl::OptionCategory *ours[] = {&ioCategory, &shardCategory,
                                      &codegenCategory, &reportCategory};
  for (auto &entry : cl::getRegisteredOptions()) {
    const cl::Option *option = entry.second;
    if (option->getNumOccurrences() <= 1 ||
        option->getNumOccurrencesFlag() != cl::Optional)
      continue;
    for (const cl::OptionCategory *category : option->Categories)
      if (llvm::is_contained(ours, category))
        return option;
  }
  return nullptr;
}

std::string spell(const cl::Option &option) {
  return (option.ArgStr.size() == 1 ? "-" : "--") + option.ArgStr.str();
}

/// Fills the schedule of `options` from --prefetch.
bool readPrefetch(ShardStepOptions &options) {
  if (prefetch.size() == 1 && StringRef(prefetch.front()).trim() == "none") {
    options.schedule = false;
    return true;
  }
  for (StringRef item : prefetch) {
    auto [key, value] = item.trim().split('=');
    key = key.trim();
    value = value.trim();
    auto number = [&](int64_t &field, bool bytes) {
      std::optional<int64_t> size =
          bytes && value != "0" ? parseByteSize(value) : std::nullopt;
      if (size) {
        field = *size;
        return true;
      }
      if (!value.getAsInteger(10, field) && field >= 0)
        return true;
      printError("--prefetch " + key + " takes a non-negative " +
                 (bytes ? "byte size" : "integer") + ", got '" + value + "'");
      return false;
    };
    if (key == "forward-depth") {
      if (!number(options.forwardDepth, false))
        return false;
    } else if (key == "max-inflight") {
      if (!number(options.maxInflight, false))
        return false;
    } else if (key == "bucket-bytes") {
      if (!number(options.bucketBytes, true))
        return false;
    } else if (key == "backward") {
      std::string name = value.lower();
      StringRef mode = name;
      mode.consume_front("backward_"); // FSDP's BACKWARD_PRE, BACKWARD_POST
      if (mode == "pre")
        options.backward = BackwardPrefetch::Pre;
      else if (mode == "post")
        options.backward = BackwardPrefetch::Post;
      else if (mode == "none")
        options.backward = BackwardPrefetch::None;
      else {
        printError("--prefetch backward takes pre, post or none, got '" +
                   value + "'");
        return false;
      }
    } else {
      printError("--prefetch takes none or forward-depth=N, "
                 "backward=pre|post|none, max-inflight=N, bucket-bytes=B; "
                 "got '" +
                 item + "'");
      return false;
    }
  }
  return true;
}

/// Checks --remat and writes it as the zshard-remat policy.
bool readRemat(ShardStepOptions &options) {
  std::string error;
  if (parseRematPolicy(remat, options.remat, error))
    return true;
  printError("--remat: " + error);
  return false;
}

/// Reads --wrap into `request`.
bool readWrap(ShardingRequest &request) {
  auto [policy, value] = StringRef(wrap).trim().split('=');
  ShardStepOptions &options = request.options;
  if (policy == "transformer") {
    options.wrap = WrapPolicy::Transformer;
    if (!value.trim().empty()) {
      options.pattern = value.trim().str();
      request.patternGiven = true;
      request.patternOption = "--wrap " + wrap;
    }
    return true;
  }
  if (policy == "size") {
    options.wrap = WrapPolicy::Size;
    if (value.trim().getAsInteger(10, options.minParams) ||
        options.minParams < 1) {
      printError("--wrap size=MIN_PARAMS takes a positive element count, "
                 "got '" +
                 value + "'");
      return false;
    }
    return true;
  }
  printError("--wrap takes transformer=PATTERN, transformer=CLASS or "
             "size=MIN_PARAMS, got '" +
             wrap + "'");
  return false;
}

/// Checks --microbatches and --microbatch-gathers and writes them into
/// `request`, if sharding was asked for.
bool readMicrobatches(std::optional<ShardingRequest> &request) {
  if (microbatches < 1) {
    printError("--microbatches must be at least 1, got " + Twine(microbatches));
    return false;
  }
  if (microbatchGathers.getNumOccurrences()) {
    if (autoShard) {
      printError("--auto chooses the microbatch gathers: give --auto or "
                 "--microbatch-gathers, not both");
      return false;
    }
    if (!request) {
      printError("--microbatch-gathers needs --strategy: it places the "
                 "gathers of a sharded step");
      return false;
    }
    if (microbatches < 2) {
      printError("--microbatch-gathers needs --microbatches K with K > 1");
      return false;
    }
  }
  if (request) {
    request->options.microbatches = microbatches;
    request->options.microbatchGathers = microbatchGathers;
  }
  return true;
}

/// Checks the sharding options and builds the request, if one was made.
bool readSharding(std::optional<ShardingRequest> &result) {
  bool given = strategy.getNumOccurrences() || autoShard;
  // cl::list overloads operator&.
  const cl::Option *shardingOptions[] = {
      &ranks, &replicas, &wrap, std::addressof(prefetch), &remat, &bufferDType};
  for (const cl::Option *option : shardingOptions)
    if (option->getNumOccurrences() && !given) {
      printError(spell(*option) + " needs --strategy (or --auto): without "
                                  "one the step is compiled as it is");
      return false;
    }
  const cl::Option *autoOptions[] = {&autoMemory, &autoPattern};
  for (const cl::Option *option : autoOptions)
    if (option->getNumOccurrences() && !autoShard) {
      printError(spell(*option) + " applies to --auto only");
      return false;
    }
  if (!given)
    return true;
  if (strategy.getNumOccurrences() && autoShard) {
    printError("--auto chooses the strategy: give --auto or --strategy, "
               "not both");
    return false;
  }
  if (!ranks.getNumOccurrences()) {
    printError(Twine(autoShard ? "--auto" : "--strategy") +
               " needs --ranks N (the ranks to shard over)");
    return false;
  }
  if (ranks < 1) {
    printError("--ranks must be at least 1, got " + Twine(ranks));
    return false;
  }
  ShardingRequest request;
  request.automatic = autoShard;
  ShardStepOptions &options = request.options;
  options.ranks = ranks;
  if (!autoShard) {
    options.strategy = strategy;
    if (isHybrid(strategy) && !replicas.getNumOccurrences()) {
      printError("--strategy " + getStrategyName(strategy) +
                 " needs --replicas R (the groups the ranks are split into)");
      return false;
    }
  }
  if (replicas.getNumOccurrences()) {
    if (autoShard || !isHybrid(strategy)) {
      printError("--replicas applies to hybrid_shard and hybrid_shard_zero2 "
                 "only");
      return false;
    }
    if (replicas < 1 || ranks % replicas != 0) {
      printError("--replicas " + Twine(replicas) + " does not divide --ranks " +
                 Twine(ranks));
      return false;
    }
    options.replicas = replicas;
  }
  if (wrap.getNumOccurrences() && autoPattern.getNumOccurrences()) {
    printError("--auto-pattern and --wrap both give the units: give one");
    return false;
  }
  if (wrap.getNumOccurrences() && !readWrap(request))
    return false;
  if (autoPattern.getNumOccurrences()) {
    options.pattern = autoPattern;
    request.patternGiven = true;
    request.patternOption = "--auto-pattern " + autoPattern;
  }
  if (prefetch.getNumOccurrences() && !readPrefetch(options))
    return false;
  options.bufferType = bufferDType;
  if (remat.getNumOccurrences()) {
    if (autoShard) {
      printError("--auto chooses the checkpointing: give --auto or --remat, "
                 "not both");
      return false;
    }
    if (!readRemat(options))
      return false;
  }
  if (autoShard) {
    if (!autoMemory.getNumOccurrences()) {
      printError("--auto needs --memory-per-rank (a byte size such as 80GiB)");
      return false;
    }
    std::optional<int64_t> memory = parseByteSize(autoMemory);
    if (!memory) {
      printError("--auto needs --memory-per-rank as a byte size such as "
                 "80GiB, got '" +
                 autoMemory + "'");
      return false;
    }
    request.memoryPerRank = *memory;
  }
  result = std::move(request);
  return true;
}

} // namespace

void zshard_compile::printError(const Twine &message) {
  llvm::errs() << "zshard-compile: error: " << message << "\n";
}

std::optional<CommandLine> zshard_compile::parseCommandLine(int argc,
                                                            char **argv) {
  // MLIR's context and printer options (--mlir-print-op-on-diagnostic,
  // --mlir-print-debuginfo, ...) work, but --help lists ours only.
  registerMLIRContextCLOptions();
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(
      {&ioCategory, &shardCategory, &codegenCategory, &reportCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "zshard-compile: training step -> artifact\n\n"
      "  zshard-compile STEP.mlir -o STEP.zsa\n"
      "  zshard-compile STEP.mlir --strategy full_shard --ranks 4 -o "
      "STEP.zsa\n");

  if (!inputFile.getNumOccurrences() &&
      llvm::sys::Process::StandardInIsUserInput()) {
    llvm::errs() << kUsage;
    return std::nullopt;
  }
  if (const cl::Option *option = findRepeatedOption()) {
    printError(spell(*option) + " given more than once");
    return std::nullopt;
  }
  if (optLevel > 3) {
    printError("-O" + Twine(optLevel) + ": the optimisation level is 0 to 3");
    return std::nullopt;
  }
  std::string cpuError;
  if (failed(checkTargetCPU(cpu, cpuError))) {
    printError(cpuError);
    return std::nullopt;
  }

  CommandLine line;
  line.input = inputFile;
  line.output = outputPath;
  line.outputGiven = outputPath.getNumOccurrences() != 0;
  line.emit = emit;
  CompileOptions &options = line.compile;
  options.inputName = line.input == "-" ? "<stdin>" : line.input;
  options.optLevel = optLevel;
  options.cpu = cpu;
  options.bufferize.fuseElementwise = !noFuse;
  options.bufferize.runtimeMatmul = !noRuntimeMatmul;
  options.timing = timing;
  options.target = target;
  options.cuda.chip = cudaChip;
  options.cuda.format = cudaFormat;
  options.memoryReport = memoryReport;
  options.memoryJSON = memoryJSON;
  options.costReport = costReport;
  options.costDevice = costDevice;
  options.costLink = costLink;
  if (!readSharding(options.sharding) || !readMicrobatches(options.sharding))
    return std::nullopt;
  options.eval = evalEntry;
  if (options.eval && line.emit != Emit::Artifact &&
      line.emit != Emit::MemoryPlan) {
    printError("--eval applies to --emit=artifact and --emit=memory-plan");
    return std::nullopt;
  }
  options.microbatches = microbatches;
  if (line.emit == Emit::ShardedMLIR && !options.sharding) {
    printError("--emit=sharded-mlir needs --strategy or --auto");
    return std::nullopt;
  }
  // What --emit writes is the output of a phase.
  switch (line.emit) {
  case Emit::Artifact:
    break;
  case Emit::ShardedMLIR:
    line.stopAfter = CompilePhase::Schedule;
    line.printModule = true;
    break;
  case Emit::LoweredMLIR:
    line.stopAfter = CompilePhase::Lower;
    line.printModule = true;
    break;
  case Emit::LLVMIR:
    options.emitLLVMIR = true;
    break;
  case Emit::MemoryPlan:
    line.stopAfter = CompilePhase::Plan;
    options.memoryReport = true;
    break;
  }
  if (compileTo.getNumOccurrences()) {
    if (line.emit != Emit::Artifact) {
      printError("--compile-to and --emit both say what to write: give one");
      return std::nullopt;
    }
    if (options.eval && compileTo != CompilePhase::Emit) {
      printError("--eval applies to the emit phase, not --compile-to=" +
                 getCompilePhaseName(compileTo));
      return std::nullopt;
    }
    line.stopAfter = compileTo;
    line.printModule = compileTo != CompilePhase::Emit;
  }
  options.outputDir = line.output;
  // --auto's table goes where it does not mix with text on stdout.
  options.autoTableToStderr =
      (line.printModule || line.emit == Emit::LLVMIR) && !line.outputGiven;
  auto registered = cl::getRegisteredOptions();
  auto it = registered.find("mlir-print-op-on-diagnostic");
  line.printOpOnDiagnostic =
      it != registered.end() && it->second->getNumOccurrences();
  return line;
}
