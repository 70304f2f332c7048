//===- CompileEval.cpp - the eval entry of an artifact --------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// zshard-compile --eval: the forward-only entry derived from the (sharded)
/// training step by zshard-extract-eval, lowered through the same phases as
/// the step, with its own memory plan, and written next to the step as
/// `eval.so` (entry `zshard_eval`), which the manifest's "eval" names. The
/// eval module keeps its ABI record through lowering, with the peak of its
/// memory plan, for the manifest written at emit.
///
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"

#include "zshard/Analysis/MemoryPlan.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Target/Artifact.h"
#include "zshard/Transforms/Passes.h"
#include "zshard/abi/ManifestSchema.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::zshard;
using namespace mlir::zshard::compiler;
namespace key = ::zshard_abi::manifest;

LogicalResult compiler::compileEval(ModuleOp module, const CompileOptions &opts,
                                    CompileErrors &errors, bool planOnly,
                                    StringRef dir) {
  MLIRContext *context = module.getContext();
  StringRef input = opts.inputName;
  PassManager extract(context);
  extract.addPass(createExtractEval());
  if (failed(extract.run(module)))
    return errors.fail("deriving the eval entry of " + input + " failed");
  StepContract contract(module);
  if (failed(contract.run()))
    return errors.fail("cannot read the eval step of " + input);
  std::string stepName = contract.getStep().getSymName().str();

  PassManager lower(context);
  if (opts.timing)
    lower.enableTiming();
  populatePhase(lower, CompilePhase::Plan, opts);
  if (failed(lower.run(module)))
    return errors.fail("lowering the eval entry of " + input + " failed");
  auto step = module.lookupSymbol<func::FuncOp>(stepName);
  if (!step)
    return errors.fail("lowering the eval entry of " + input + " lost " +
                       stepName);
  MemoryPlan plan(step);
  if (failed(plan.run()))
    return errors.fail("cannot plan the memory of the eval entry of " + input);
  addRuntimeHeldBuffers(plan, contract, step);
  // The peak is the eval entry's ABI fact the manifest reports.
  FailureOr<StepABIAttr> abi = getStepABI(module);
  if (failed(abi))
    return failure();
  module->setAttr(contract::kABI, abi->withPeakBytes(plan.getPeakTotal()));
  if (opts.memoryReport)
    llvm::outs() << "memory plan per rank of the eval entry of " << input
                 << ":\n"
                 << formatMemoryTable(plan);
  if (planOnly)
    return success();

  PassManager toLLVM(context);
  if (opts.timing)
    toLLVM.enableTiming();
  populatePhase(toLLVM, CompilePhase::Lower, opts);
  if (failed(toLLVM.run(module)))
    return errors.fail("lowering the eval entry of " + input + " failed");

  SharedObjectOptions soOptions;
  soOptions.optLevel = opts.optLevel;
  soOptions.cpu = opts.cpu;
  soOptions.entry = key::kDefaultEvalEntry;
  // The step's argument buffers, then the loss.
  abi = getStepABI(module);
  if (failed(abi))
    return failure();
  unsigned numBuffers = abi->getArguments().size() + abi->getResults().size();
  std::string signature = getSignatureHash(*abi);
  StepObjectFiles objects = getStepObjectFiles(dir, "eval");
  if (failed(emitObjectFiles(module, stepName, numBuffers, signature, objects,
                             soOptions)))
    return errors.fail("code generation of the eval entry failed");
  SmallString<128> soPath(dir);
  llvm::sys::path::append(soPath, key::kDefaultEvalLibrary);
  std::string error;
  LogicalResult linked =
      linkSharedObject({objects.code, objects.glue}, soPath, error);
  llvm::sys::fs::remove(objects.code);
  llvm::sys::fs::remove(objects.glue);
  if (failed(linked))
    return errors.error(error);
  return success();
}
