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

#include "zshard/Analysis/CostModel.h"
#include "zshard/Analysis/MemoryPlan.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/InitAll.h"
#include "zshard/Pipelines/AutoShard.h"
#include "zshard/Pipelines/Pipelines.h"
#include "zshard/Target/Artifact.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string>
    inputFile(cl::Positional, cl::desc("<training step .mlir>"), cl::init("-"));
static cl::opt<std::string> outputPath("o",
                                       cl::desc("Output artifact "
                                                "directory (NAME.zsa)"),
                                       cl::value_desc("path"),
                                       cl::init("step.zsa"));
enum class Emit { Artifact, LoweredMLIR, LLVMIR, MemoryPlan };
static cl::opt<Emit>
    emit("emit", cl::desc("What to write"), cl::init(Emit::Artifact),
         cl::values(clEnumValN(Emit::Artifact, "artifact",
                               "the artifact directory (default)"),
                    clEnumValN(Emit::LoweredMLIR, "lowered-mlir",
                               "the step in the LLVM dialect, to -o or stdout"),
                    clEnumValN(Emit::LLVMIR, "llvm-ir",
                               "the optimised LLVM IR, to -o or stdout"),
                    clEnumValN(Emit::MemoryPlan, "memory-plan",
                               "nothing but the memory plan (implies "
                               "--memory-report; no code generation, so "
                               "shapes-only steps are accepted)")));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimisation level"),
                                  cl::Prefix, cl::init(3));
static cl::opt<std::string>
    cpu("mcpu", cl::desc("CPU to compile for (default: host)"), cl::init(""));
static cl::opt<bool> noFuse("no-fuse", cl::desc("Do not fuse elementwise ops"));
static cl::opt<bool>
    noRuntimeMatmul("no-runtime-matmul",
                    cl::desc("Lower matrix products to loops, not BLAS"));
static cl::opt<bool> timing("timing", cl::desc("Print pass and phase timings"));
enum class Target { CPU, CUDA };
static cl::opt<Target> target(
    "target", cl::desc("Device the step runs on"), cl::init(Target::CPU),
    cl::values(clEnumValN(Target::CPU, "cpu", "host code (default)"),
               clEnumValN(Target::CUDA, "cuda",
                          "CUDA kernels in an embedded GPU binary, cuBLAS "
                          "and the runtime's device memory")));
static cl::opt<std::string> cudaChip("cuda-chip",
                                     cl::desc("--target=cuda: SM architecture"),
                                     cl::init("sm_90"));
static cl::opt<std::string> cudaFormat(
    "cuda-format",
    cl::desc("--target=cuda: embedded binary, auto (fatbin when the CUDA "
             "toolkit has ptxas and fatbinary, else isa), isa (PTX), bin "
             "(cubin) or fatbin"),
    cl::init("auto"));
static cl::opt<bool> memoryReport(
    "memory-report",
    cl::desc("Print the static per-rank memory plan (peak by category) "
             "to stdout"));
static cl::opt<bool> costReport(
    "cost-report",
    cl::desc("Print the predicted step time and exposed communication for "
             "--device over --link (the cost model)"));
static cl::opt<std::string> costDevice("device",
                                       cl::desc("Cost model device preset"),
                                       cl::init("h100"));
static cl::opt<std::string> costLink("link", cl::desc("Cost model link preset"),
                                     cl::init("ib"));
static cl::opt<bool> autoShard(
    "auto", cl::desc("Choose the strategy (and checkpointing) for --ranks "
                     "under --memory-per-rank by the memory plan and the "
                     "cost model for --device over --link; the input is an "
                     "unsharded step"));
static cl::opt<int64_t> autoRanks("ranks", cl::desc("--auto: ranks"),
                                  cl::init(1));
static cl::opt<std::string>
    autoMemory("memory-per-rank",
               cl::desc("--auto: memory per rank, e.g. 80GiB"), cl::init(""));
static cl::opt<std::string>
    autoPattern("auto-pattern",
                cl::desc("--auto: module paths of units and checkpointed "
                         "blocks"),
                cl::init("h.<i>"));
static cl::opt<std::string> memoryJSON(
    "memory-json",
    cl::desc("Write the memory plan (peaks and live-bytes timeline) as JSON"),
    cl::value_desc("file"), cl::init(""));

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
    llvm::errs() << "zshard-compile: " << error << "\n";
    return failure();
  }
  file->os() << text;
  file->keep();
  return success();
}

/// Where --emit=lowered-mlir/llvm-ir write: -o if given, else stdout.
std::string textOutput() {
  return outputPath.getNumOccurrences() ? outputPath.getValue()
                                        : std::string("-");
}

int fail(const Twine &message) {
  llvm::errs() << "zshard-compile: " << message << "\n";
  return 1;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "zshard-compile: training step -> artifact\n");

  DialectRegistry registry;
  mlir::zshard::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name their location; a whole step printed after them would
  // bury the message.
  context.printOpOnDiagnostic(false);

  StopWatch total;
  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + inputFile);
  double parseSeconds = total.seconds();

  // The contract is checked and read before lowering drops its attributes.
  PassManager verify(&context);
  verify.addPass(mlir::zshard::createVerifyContract());
  if (failed(verify.run(*module)))
    return fail(inputFile + " is not a valid training step (see above)");
  if (autoShard) {
    mlir::zshard::AutoShardOptions options;
    options.ranks = autoRanks;
    std::optional<int64_t> memory = mlir::zshard::parseByteSize(autoMemory);
    if (!memory)
      return fail("--auto needs --memory-per-rank as a byte size such as "
                  "80GiB, got '" +
                  autoMemory + "'");
    options.memoryPerRank = *memory;
    std::optional<mlir::zshard::DeviceModel> device =
        mlir::zshard::lookupDevice(costDevice);
    std::optional<mlir::zshard::LinkModel> link =
        mlir::zshard::lookupLink(costLink);
    if (!device || !link)
      return fail("unknown --device or --link; presets: " +
                  mlir::zshard::getDevicePresetNames() + "; " +
                  mlir::zshard::getLinkPresetNames());
    options.device = *device;
    options.link = *link;
    options.pattern = autoPattern;
    if (autoRanks < 1)
      return fail("--ranks must be at least 1");
    if (failed(mlir::zshard::autoShard(*module, options, llvm::outs())))
      return fail("--auto found no strategy for " + inputFile + " (see above)");
  }
  mlir::zshard::StepContract contract(*module);
  if (failed(contract.run()))
    return fail("cannot read the step contract");
  bool planOnly = emit == Emit::MemoryPlan;
  if ((*module)->hasAttr("zshard.shapes_only") && !planOnly)
    return fail(inputFile + " is a shapes-only step (zshard.shapes_only): it "
                            "is meant for planning, not for running (use "
                            "--emit=memory-plan)");
  if (costReport) {
    std::optional<mlir::zshard::DeviceModel> device =
        mlir::zshard::lookupDevice(costDevice);
    std::optional<mlir::zshard::LinkModel> link =
        mlir::zshard::lookupLink(costLink);
    if (!device)
      return fail("unknown --device '" + costDevice + "'; presets: " +
                  mlir::zshard::getDevicePresetNames());
    if (!link)
      return fail("unknown --link '" + costLink + "'; presets: " +
                  mlir::zshard::getLinkPresetNames());
    FailureOr<mlir::zshard::CostReport> cost =
        mlir::zshard::CostModel(*device, *link).estimate(contract.getStep());
    if (failed(cost))
      return fail("cannot cost " + inputFile + " (see above)");
    llvm::outs() << "cost model of " << inputFile << " (" << device->name
                 << ", " << link->name << "): " << cost->toJSON() << "\n";
  }
  std::string stepName = contract.getStep().getSymName().str();
  unsigned numBuffers =
      contract.getArguments().size() + contract.getResults().size();
  llvm::json::Object manifest = mlir::zshard::buildManifest(contract, *module);

  StopWatch lowerTimer;
  PassManager lower(&context);
  if (timing)
    lower.enableTiming();
  mlir::zshard::LowerToLLVMOptions options;
  options.fuseElementwise = !noFuse;
  options.runtimeMatmul = !noRuntimeMatmul;
  mlir::zshard::buildBufferizeStepPipeline(lower, options);
  if (failed(lower.run(*module)))
    return fail("lowering " + inputFile + " failed (see above)");
  auto step = module->lookupSymbol<func::FuncOp>(stepName);
  if (!step)
    return fail("lowering " + inputFile + " lost the step " + stepName);
  SmallVector<bool> inPlace = mlir::zshard::getInPlaceResults(contract, step);
  mlir::zshard::recordInPlaceResults(manifest, contract, inPlace);
  std::string signature = mlir::zshard::getSignatureHash(contract, inPlace);
  if (memoryReport || planOnly || !memoryJSON.empty()) {
    mlir::zshard::MemoryPlan plan(step);
    if (failed(plan.run()))
      return fail("cannot plan the memory of " + inputFile + " (see above)");
    mlir::zshard::addRuntimeHeldBuffers(plan, contract, step);
    if (memoryReport || planOnly)
      llvm::outs() << "memory plan per rank of " << inputFile << ":\n"
                   << mlir::zshard::formatMemoryTable(plan);
    if (!memoryJSON.empty() &&
        failed(writeText(memoryJSON, plan.toJSON() + "\n")))
      return 1;
    if (planOnly)
      return 0;
  }
  PassManager toLLVM(&context);
  if (timing)
    toLLVM.enableTiming();
  if (target == Target::CUDA) {
    mlir::zshard::CUDATargetOptions cuda;
    cuda.chip = cudaChip;
    cuda.toolkit = mlir::zshard::findCUDAToolkit();
    cuda.format = cudaFormat == "auto"
                      ? mlir::zshard::getBestCUDABinaryFormat(cuda.toolkit)
                      : cudaFormat.getValue();
    mlir::zshard::buildBufferizedStepToCUDAPipeline(toLLVM, cuda);
    mlir::zshard::recordTarget(manifest, "cuda", cudaChip);
  } else {
    mlir::zshard::buildBufferizedStepToLLVMPipeline(toLLVM);
    mlir::zshard::recordTarget(manifest, "cpu");
  }
  if (failed(toLLVM.run(*module)))
    return fail("lowering " + inputFile + " failed (see above)");
  double lowerSeconds = lowerTimer.seconds();

  if (emit == Emit::LoweredMLIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return failed(writeText(textOutput(), text)) ? 1 : 0;
  }

  mlir::zshard::SharedObjectOptions soOptions;
  soOptions.optLevel = optLevel;
  soOptions.cpu = cpu;
  StopWatch codegenTimer;
  SmallString<128> dir(outputPath);
  std::string llvmIR;
  SmallString<128> objectPath;
  if (emit == Emit::LLVMIR) {
    if (auto ec =
            llvm::sys::fs::createTemporaryFile("zshard-step", "o", objectPath))
      return fail("cannot create a temporary file: " + ec.message());
  } else {
    if (auto ec = llvm::sys::fs::create_directories(dir))
      return fail("cannot create " + dir + ": " + ec.message());
    objectPath = dir;
    llvm::sys::path::append(objectPath, "step.o");
  }
  if (failed(mlir::zshard::emitObjectFile(
          *module, stepName, numBuffers, signature, objectPath, soOptions,
          emit == Emit::LLVMIR ? &llvmIR : nullptr)))
    return fail("code generation failed (see above)");
  if (emit == Emit::LLVMIR) {
    llvm::sys::fs::remove(objectPath);
    return failed(writeText(textOutput(), llvmIR)) ? 1 : 0;
  }

  SmallString<128> soPath(dir);
  llvm::sys::path::append(soPath, "step.so");
  if (failed(mlir::zshard::linkSharedObject(objectPath, soPath, error)))
    return fail(error);
  llvm::sys::fs::remove(objectPath);
  double codegenSeconds = codegenTimer.seconds();

  SmallString<128> manifestPath(dir);
  llvm::sys::path::append(manifestPath, "manifest.json");
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  if (failed(writeText(manifestPath, text)))
    return 1;
  if (timing)
    llvm::errs() << llvm::formatv(
        "{{\"parse_s\": {0:f3}, \"lower_s\": {1:f3}, \"codegen_s\": {2:f3}, "
        "\"total_s\": {3:f3}}\n",
        parseSeconds, lowerSeconds, codegenSeconds, total.seconds());
  return 0;
}
