//===- CompileOptions.cpp - zshard-compile's command line -----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "CompileOptions.h"
#include "ShardingOptions.h"

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
cl::OptionCategory codegenCategory("Code generation");
cl::OptionCategory reportCategory("Reports");

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
  const cl::OptionCategory *ours[] = {&ioCategory, &getShardingCategory(),
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

} // namespace

void zshard_compile::printError(const Twine &message) {
  llvm::errs() << "zshard-compile: error: " << message << "\n";
}

std::string zshard_compile::spellOption(const cl::Option &option) {
  return (option.ArgStr.size() == 1 ? "-" : "--") + option.ArgStr.str();
}

std::optional<CommandLine> zshard_compile::parseCommandLine(int argc,
                                                            char **argv) {
  // MLIR's context and printer options (--mlir-print-op-on-diagnostic,
  // --mlir-print-debuginfo, ...) work, but --help lists ours only.
  registerMLIRContextCLOptions();
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(
      {&ioCategory, &getShardingCategory(), &codegenCategory, &reportCategory});
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
    printError(spellOption(*option) + " given more than once");
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
  if (!readShardingOptions(options))
    return std::nullopt;
  options.eval = evalEntry;
  if (options.eval && line.emit != Emit::Artifact &&
      line.emit != Emit::MemoryPlan) {
    printError("--eval applies to --emit=artifact and --emit=memory-plan");
    return std::nullopt;
  }
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
