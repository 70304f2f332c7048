//===- Compiler.cpp - a training step to an artifact, in phases -----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// compile(): the phases in order, with the steps between them that are not
/// passes -- the sharding request resolved against the step, the contract
/// read for the reports, the memory plan, code generation and the
/// artifact's files, whose manifest is written once, at emit, from the
/// lowered module's ABI record.
///
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"

#include "zshard/Analysis/MemoryPlan.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Target/Artifact.h"
#include "zshard/abi/ManifestSchema.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
using namespace mlir::zshard;
using namespace mlir::zshard::compiler;

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
} // namespace

CompileErrors::CompileErrors(MLIRContext *context)
    : ScopedDiagnosticHandler(context), context(context) {
  // Counted, then handed to the handler below (failure: not handled).
  setHandler([this](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
      ++numErrors;
    return failure();
  });
}

LogicalResult CompileErrors::fail(const Twine &message) {
  if (numErrors == 0)
    return error(message);
  return failure();
}

LogicalResult CompileErrors::error(const Twine &message) {
  emitError(UnknownLoc::get(context)) << message.str();
  return failure();
}

LogicalResult compiler::writeFile(StringRef path, StringRef text,
                                  CompileErrors &errors) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return errors.error(StringRef(error).trim());
  file->os() << text;
  file->keep();
  return success();
}

/// The artifact: the step's object files linked into `step.so`, the eval
/// entry, and the manifest, written from the lowered modules' ABI records.
static LogicalResult emitArtifact(ModuleOp module, const CompileOptions &opts,
                                  CompileErrors &errors, ModuleOp evalModule,
                                  CompileResult &result) {
  FailureOr<StepABIAttr> abi = getStepABI(module);
  if (failed(abi))
    return failure();
  std::string stepName = abi->getStep().str();
  unsigned numBuffers = abi->getArguments().size() + abi->getResults().size();
  std::string signature = getSignatureHash(*abi);
  SharedObjectOptions soOptions;
  soOptions.optLevel = opts.optLevel;
  soOptions.cpu = opts.cpu;
  StopWatch codegenTimer;
  SmallString<128> dir(opts.outputDir);
  StepObjectFiles objects;
  if (opts.emitLLVMIR) {
    for (std::string *path : {&objects.code, &objects.glue}) {
      SmallString<128> temporary;
      if (auto ec =
              llvm::sys::fs::createTemporaryFile("zshard-step", "o", temporary))
        return errors.fail("cannot create a temporary file: " + ec.message());
      *path = temporary.str().str();
    }
  } else {
    if (auto ec = llvm::sys::fs::create_directories(dir))
      return errors.fail("cannot create " + dir + ": " + ec.message());
    objects = getStepObjectFiles(dir, "step");
  }
  LogicalResult emitted =
      emitObjectFiles(module, stepName, numBuffers, signature, objects,
                      soOptions, opts.emitLLVMIR ? &result.llvmIR : nullptr);
  if (opts.emitLLVMIR) {
    llvm::sys::fs::remove(objects.code);
    llvm::sys::fs::remove(objects.glue);
  }
  if (failed(emitted))
    return errors.fail("code generation failed");
  if (opts.emitLLVMIR)
    return success();

  SmallString<128> soPath(dir);
  llvm::sys::path::append(soPath, ::zshard_abi::manifest::kDefaultLibrary);
  std::string error;
  LogicalResult linked =
      linkSharedObject({objects.code, objects.glue}, soPath, error);
  llvm::sys::fs::remove(objects.code);
  llvm::sys::fs::remove(objects.glue);
  if (failed(linked))
    return errors.fail(error);
  result.codegenSeconds = codegenTimer.seconds();
  if (evalModule &&
      failed(compileEval(evalModule, opts, errors, /*planOnly=*/false, dir)))
    return failure();
  FailureOr<llvm::json::Object> manifest = buildManifest(module, evalModule);
  if (failed(manifest))
    return failure();

  SmallString<128> manifestPath(dir);
  llvm::sys::path::append(manifestPath, ::zshard_abi::manifest::kFileName);
  return writeFile(manifestPath, printManifest(std::move(*manifest)), errors);
}

LogicalResult zshard::compile(ModuleOp module, const CompileOptions &given,
                              CompilePhase stopAfter, CompileResult *result) {
  MLIRContext *context = module.getContext();
  CompileErrors errors(context);
  CompileResult ignored;
  if (!result)
    result = &ignored;
  CompileOptions opts = given;
  StringRef input = opts.inputName;

  // verify: the contract is checked before anything reads it.
  PassManager verify(context);
  populatePhase(verify, CompilePhase::Verify, opts);
  if (failed(verify.run(module)))
    return errors.fail(input + " is not a valid training step");
  if (stopAfter == CompilePhase::Verify)
    return success();

  // remat .. schedule: one request, resolved against the step, whose
  // passes run as one pipeline.
  if (opts.sharding && failed(resolveSharding(module, opts, errors)))
    return failure();
  PassManager sharding(context);
  for (CompilePhase phase : {CompilePhase::Remat, CompilePhase::Units,
                             CompilePhase::Shard, CompilePhase::Schedule})
    if (phase <= stopAfter)
      populatePhase(sharding, phase, opts);
  if (sharding.size() != 0) {
    if (opts.timing)
      sharding.enableTiming();
    if (failed(sharding.run(module)))
      return errors.fail(opts.sharding ? "sharding " + input + " failed"
                                       : "accumulating microbatches of " +
                                             input + " failed");
  }
  if (stopAfter <= CompilePhase::Schedule)
    return success();

  // plan: the reports that read the step on tensors, the step's ABI record
  // (zshard-record-abi, the first pass of the phase, while the contract and
  // the units are in the IR), bufferization and the memory plan.
  StepContract contract(module);
  if (failed(contract.run()))
    return errors.fail("cannot read the step contract of " + input);
  if (module->hasAttr("zshard.shapes_only") && stopAfter > CompilePhase::Plan)
    return errors.fail(input + " is a shapes-only step (zshard.shapes_only): "
                               "it is meant for planning, not for running "
                               "(use --emit=memory-plan)");
  if (opts.costReport) {
    DeviceModel device = getDeviceModel(opts.costDevice);
    LinkModel link = getLinkModel(opts.costLink);
    FailureOr<CostReport> cost =
        CostModel(device, link).estimate(contract.getStep());
    if (failed(cost))
      return errors.fail("cannot cost " + input);
    llvm::outs() << "cost model of " << input << " (" << device.name << ", "
                 << link.name << "): " << cost->toJSON() << "\n";
  }
  std::string stepName = contract.getStep().getSymName().str();
  // --eval derives its entry from the step as it is here, before lowering.
  OwningOpRef<ModuleOp> evalModule;
  if (opts.eval)
    evalModule = module.clone();

  StopWatch lowerTimer;
  PassManager bufferize(context);
  if (opts.timing)
    bufferize.enableTiming();
  populatePhase(bufferize, CompilePhase::Plan, opts);
  if (failed(bufferize.run(module)))
    return errors.fail("lowering " + input + " failed");
  auto step = module.lookupSymbol<func::FuncOp>(stepName);
  if (!step)
    return errors.fail("lowering " + input + " lost the step " + stepName);
  if (opts.memoryReport || !opts.memoryJSON.empty()) {
    MemoryPlan plan(step);
    if (failed(plan.run()))
      return errors.fail("cannot plan the memory of " + input);
    addRuntimeHeldBuffers(plan, contract, step);
    if (opts.memoryReport)
      llvm::outs() << "memory plan per rank of " << input << ":\n"
                   << formatMemoryTable(plan);
    if (!opts.memoryJSON.empty() &&
        failed(writeFile(opts.memoryJSON, plan.toJSON() + "\n", errors)))
      return failure();
  }
  if (stopAfter == CompilePhase::Plan)
    return evalModule ? compileEval(*evalModule, opts, errors,
                                    /*planOnly=*/true, "")
                      : success();

  // lower: the bufferized step to the LLVM dialect for the target.
  PassManager toLLVM(context);
  if (opts.timing)
    toLLVM.enableTiming();
  populatePhase(toLLVM, CompilePhase::Lower, opts);
  if (failed(toLLVM.run(module)))
    return errors.fail("lowering " + input + " failed");
  result->lowerSeconds = lowerTimer.seconds();
  if (stopAfter == CompilePhase::Lower)
    return success();

  // emit: code generation and the artifact.
  return emitArtifact(module, opts, errors,
                      evalModule ? *evalModule : ModuleOp(), *result);
}
