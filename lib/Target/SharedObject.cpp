//===- SharedObject.cpp - LLVM IR, object file, shared object -------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// In-process code generation of a lowered step: MLIR LLVM dialect -> LLVM
/// IR, the `zshard_step` entry that unpacks the buffer array, the LLVM
/// optimisation pipeline, and a TargetMachine emitting an object file. Only
/// the final link into a shared object uses the system compiler driver.
///
//===----------------------------------------------------------------------===//

#include "zshard/Target/Artifact.h"
#include "zshard/abi/ManifestSchema.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/LoopAccessAnalysis.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Scalar/LICM.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"
#include "llvm/Transforms/Scalar/LoopVersioningLICM.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"

using namespace mlir;
using namespace mlir::zshard;

/// Moves every top-level loop of `function` into a function of its own. A
/// lowered step is one function with thousands of loop nests; LLVM's
/// optimisations are superlinear in function size (8 GPT layers took 20 s of
/// codegen, 32 layers over 10 minutes), while many small functions optimise
/// in linear time, and inlining heuristics leave them apart.
static unsigned outlineTopLevelLoops(llvm::Function &function) {
  llvm::DominatorTree dominators(function);
  llvm::LoopInfo loops(dominators);
  SmallVector<llvm::Loop *> topLevel(loops.begin(), loops.end());
  unsigned outlined = 0;
  // One cache for all extractions, as LLVM's hot/cold splitting does: built
  // per loop it made outlining quadratic in the number of loops.
  llvm::CodeExtractorAnalysisCache cache(function);
  for (llvm::Loop *loop : topLevel) {
    llvm::CodeExtractor extractor(loop->getBlocks(), &dominators,
                                  /*AggregateArgs=*/false, nullptr, nullptr,
                                  nullptr, /*AllowVarArgs=*/false,
                                  /*AllowAlloca=*/false, nullptr,
                                  "zshard.loop");
    if (!extractor.isEligible())
      continue;
    if (llvm::Function *body = extractor.extractCodeRegion(cache)) {
      body->addFnAttr(llvm::Attribute::NoInline);
      ++outlined;
    }
  }
  return outlined;
}

/// The global values `function` refers to, through constant expressions
/// too.
static void collectReferencedGlobals(
    llvm::Function &function, llvm::SmallPtrSetImpl<llvm::GlobalValue *> &out) {
  SmallVector<const llvm::Constant *> worklist;
  llvm::SmallPtrSet<const llvm::Constant *, 32> seen;
  for (llvm::Instruction &inst : llvm::instructions(function))
    for (llvm::Value *operand : inst.operands())
      if (auto *constant = dyn_cast<llvm::Constant>(operand))
        if (seen.insert(constant).second)
          worklist.push_back(constant);
  while (!worklist.empty()) {
    const llvm::Constant *constant = worklist.pop_back_val();
    if (auto *global = dyn_cast<llvm::GlobalValue>(constant)) {
      out.insert(const_cast<llvm::GlobalValue *>(global));
      continue;
    }
    for (const llvm::Value *operand : constant->operands())
      if (auto *inner = dyn_cast<llvm::Constant>(operand))
        if (seen.insert(inner).second)
          worklist.push_back(inner);
  }
}

/// Moves `glue` (the step and its entry points) out of `module` into a
/// module of its own and returns it. What the glue calls or reads stays in
/// `module`, given hidden external linkage so that the two objects link;
/// the glue is left local to its own object.
static std::unique_ptr<llvm::Module>
splitGlue(llvm::Module &module, ArrayRef<llvm::Function *> glue) {
  llvm::SmallPtrSet<llvm::GlobalValue *, 8> isGlue(glue.begin(), glue.end());
  llvm::SmallPtrSet<llvm::GlobalValue *, 32> referenced;
  for (llvm::Function *function : glue)
    collectReferencedGlobals(*function, referenced);
  unsigned unnamed = 0;
  for (llvm::GlobalValue *global : referenced) {
    if (isGlue.contains(global) || !global->hasLocalLinkage())
      continue;
    if (!global->hasName())
      global->setName("zshard.shared." + Twine(unnamed++));
    global->setLinkage(llvm::GlobalValue::ExternalLinkage);
    global->setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> glueModule =
      llvm::CloneModule(module, map, [&](const llvm::GlobalValue *global) {
        return isGlue.contains(global);
      });
  // Declarations of what the glue does not use go; the entries that were
  // exported stay so, the step stays internal to the glue's object.
  for (llvm::Function &function :
       llvm::make_early_inc_range(glueModule->functions()))
    if (function.isDeclaration() && function.use_empty())
      function.eraseFromParent();
  for (llvm::GlobalVariable &variable :
       llvm::make_early_inc_range(glueModule->globals()))
    if (variable.isDeclaration() && variable.use_empty())
      variable.eraseFromParent();
  // Entries first: they call the step.
  for (llvm::Function *function : llvm::reverse(glue)) {
    function->replaceAllUsesWith(llvm::PoisonValue::get(function->getType()));
    function->eraseFromParent();
  }
  return glueModule;
}

/// Writes `module` as an object file at `path` with `machine`.
static LogicalResult writeObjectFile(llvm::Module &module,
                                     llvm::TargetMachine &machine,
                                     StringRef path, ModuleOp lowered) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return lowered.emitError("cannot write ") << path << ": " << ec.message();
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, out, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return lowered.emitError("the target cannot emit object files");
  codegen.run(module);
  out.flush();
  return success();
}

/// Adds `void ENTRY(ptr buffers)` calling `step(buffers[0], ...)` and
/// `ptr ENTRY_signature()`.
static LogicalResult addEntryPoints(llvm::Module &module, StringRef stepName,
                                    unsigned numBuffers, StringRef signature,
                                    StringRef entryName, std::string &error) {
  llvm::Function *step = module.getFunction(stepName);
  if (!step) {
    error = ("lowered module has no function '" + stepName + "'").str();
    return failure();
  }
  if (step->arg_size() != numBuffers) {
    error = ("step '" + stepName + "' takes " + Twine(step->arg_size()) +
             " arguments after lowering, expected " + Twine(numBuffers))
                .str();
    return failure();
  }
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  auto *entryType =
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  auto *entry = llvm::Function::Create(
      entryType, llvm::GlobalValue::ExternalLinkage, entryName, module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(ctx, "entry", entry));
  SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < numBuffers; ++i) {
    llvm::Value *slot =
        builder.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i);
    args.push_back(builder.CreateLoad(ptr, slot));
  }
  builder.CreateCall(step, args);
  builder.CreateRetVoid();
  step->setLinkage(llvm::GlobalValue::InternalLinkage);

  auto *sigType = llvm::FunctionType::get(ptr, {}, false);
  auto *sigFn = llvm::Function::Create(
      sigType, llvm::GlobalValue::ExternalLinkage,
      llvm::Twine(entryName) + ::zshard_abi::manifest::kSignatureSuffix,
      module);
  llvm::IRBuilder<> sigBuilder(llvm::BasicBlock::Create(ctx, "entry", sigFn));
  sigBuilder.CreateRet(
      sigBuilder.CreateGlobalString(signature, "zshard.signature"));
  return success();
}

/// The native target and its triple.
static const llvm::Target *lookupNativeTarget(llvm::Triple &triple,
                                              std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  triple = llvm::Triple(llvm::sys::getDefaultTargetTriple());
  return llvm::TargetRegistry::lookupTarget(triple, error);
}

static bool isHostCPU(StringRef cpu) { return cpu.empty() || cpu == "native"; }

LogicalResult zshard::checkTargetCPU(StringRef cpu, std::string &error) {
  if (isHostCPU(cpu))
    return success();
  llvm::Triple triple;
  const llvm::Target *target = lookupNativeTarget(triple, error);
  if (!target)
    return failure();
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  if (info && info->isCPUStringValid(cpu))
    return success();
  error = ("-mcpu=" + cpu + " is not a CPU of " + triple.str() +
           " (this machine's is " + llvm::sys::getHostCPUName() +
           ", which -mcpu=native or no -mcpu compiles for)")
              .str();
  return failure();
}

LogicalResult zshard::emitObjectFiles(ModuleOp lowered, StringRef stepName,
                                      unsigned numBuffers, StringRef signature,
                                      const StepObjectFiles &paths,
                                      const SharedObjectOptions &options,
                                      std::string *llvmIR) {
  // The contract's argument attributes have served; LLVM has no use for
  // them. Those of the LLVM dialect stay (the `llvm.noalias` of the outlined
  // kernels' private buffers, zshard-outline-compute-ops).
  lowered.walk([](LLVM::LLVMFuncOp func) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      SmallVector<NamedAttribute> kept;
      for (NamedAttribute attr :
           mlir::function_interface_impl::getArgAttrs(func, i))
        if (attr.getName().strref().starts_with("llvm."))
          kept.push_back(attr);
      func.setArgAttrs(i, kept);
    }
    func.removeResAttrsAttr();
  });
  registerBuiltinDialectTranslation(*lowered.getContext());
  registerLLVMDialectTranslation(*lowered.getContext());
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(lowered, llvmContext, "zshard_step");
  if (!module)
    return lowered.emitError("translation to LLVM IR failed");

  llvm::Triple triple;
  std::string error;
  const llvm::Target *target = lookupNativeTarget(triple, error);
  if (!target)
    return lowered.emitError("no LLVM target for ")
           << triple.str() << ": " << error;
  if (failed(checkTargetCPU(options.cpu, error)))
    return lowered.emitError(error);
  bool host = isHostCPU(options.cpu);
  std::string cpu = host ? llvm::sys::getHostCPUName().str() : options.cpu;
  std::string features;
  if (host) {
    llvm::SubtargetFeatures subtarget;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      subtarget.AddFeature(feature.first(), feature.second);
    features = subtarget.getString();
  }
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_));
  // The glue's: fast instruction selection and register allocation.
  std::unique_ptr<llvm::TargetMachine> glueMachine(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::None));
  if (!machine || !glueMachine)
    return lowered.emitError("cannot create a target machine for ") << cpu;
  module->setTargetTriple(triple);
  module->setDataLayout(machine->createDataLayout());
  // Vectorise at the host's SIMD width: X86's tuning for AVX-512 CPUs
  // prefers 256-bit vectors (a guard against the frequency drop of 512-bit
  // code in mixed workloads), which halves the width of a step's
  // elementwise loops. Lane-wise code: the results are the same.
  if (host && llvm::is_contained(llvm::split(features, ','), "+avx512f"))
    for (llvm::Function &function : *module)
      if (!function.isDeclaration())
        function.addFnAttr("prefer-vector-width", "512");

  if (llvm::Function *step = module->getFunction(stepName))
    outlineTopLevelLoops(*step);
  // Loops that compile to the same code (the same loop of every block that
  // zshard-outline-compute-ops left inline) are compiled once.
  llvm::MergeFunctionsPass::runOnModule(*module);
  if (failed(addEntryPoints(*module, stepName, numBuffers, signature,
                            options.entry, error)))
    return lowered.emitError(error);
  // What is left of the step is straight-line glue (allocations, calls of
  // the outlined ops and the runtime, pointer arithmetic), about 5,000
  // instructions per GPT-2-small layer in one block. On it O3's InstCombine
  // (which of two instructions comes first) and the greedy register
  // allocator (each call's clobbers against every value live across it)
  // take time quadratic in depth, for no gain in a sequence of calls. So
  // the glue becomes an object of its own compiled as at -O0 (fast
  // instruction selection and register allocation, linear in its size),
  // and the code it calls is optimised at -O<level> without it.
  std::unique_ptr<llvm::Module> glue =
      splitGlue(*module, {module->getFunction(stepName),
                          module->getFunction(options.entry),
                          module->getFunction(
                              options.entry +
                              ::zshard_abi::manifest::kSignatureSuffix)});
  if (llvm::verifyModule(*module, &llvm::errs()) ||
      llvm::verifyModule(*glue, &llvm::errs()))
    return lowered.emitError("generated LLVM IR does not verify");

  if (options.optLevel > 0) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    // No loop unrolling: with the static trip counts of a step, LLVM fully
    // unrolls inner loops (a GPT-2-small attention loop became one block of
    // 2300 scalar loads and stores), and the schedulers are superlinear in
    // block size: a 2-layer GPT-2-small step took 30 s of CPU to compile
    // with unrolling, 0.9 s without, and the step ran no slower. The
    // vectoriser still interleaves.
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = false;
    llvm::PassBuilder builder(machine.get(), tuning);
    // A reduction into a buffer (the row sums of LayerNorm, softmax, the
    // loss) accumulates through memory: the outlined kernels take bare
    // pointers, so LICM cannot prove the output disjoint from the inputs,
    // and each addition waits for the store of the last. Loop versioning
    // checks the disjointness at run time and keeps the accumulator in a
    // register in the checked copy; the additions and their order are the
    // same.
    // LayerNorm's backward sums two products per row over seven buffers:
    // 11 pairs to check, over LLVM's default of 8 per loop.
    llvm::VectorizerParams::RuntimeMemoryCheckThreshold =
        std::max(llvm::VectorizerParams::RuntimeMemoryCheckThreshold, 16u);
    builder.registerVectorizerStartEPCallback(
        [](llvm::FunctionPassManager &fpm, llvm::OptimizationLevel) {
          fpm.addPass(llvm::createFunctionToLoopPassAdaptor(
              llvm::LoopVersioningLICMPass()));
          fpm.addPass(llvm::createFunctionToLoopPassAdaptor(
              llvm::LICMPass(llvm::LICMOptions()), /*UseMemorySSA=*/true));
        });
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel level =
        options.optLevel == 1   ? llvm::OptimizationLevel::O1
        : options.optLevel == 2 ? llvm::OptimizationLevel::O2
                                : llvm::OptimizationLevel::O3;
    builder.buildPerModuleDefaultPipeline(level).run(*module, mam);
  }
  if (llvmIR) {
    llvm::raw_string_ostream os(*llvmIR);
    module->print(os, nullptr);
    glue->print(os, nullptr);
  }
  if (failed(writeObjectFile(*module, *machine, paths.code, lowered)))
    return failure();
  return writeObjectFile(*glue, *glueMachine, paths.glue, lowered);
}

StepObjectFiles zshard::getStepObjectFiles(StringRef dir, StringRef stem) {
  StepObjectFiles files;
  SmallString<128> path(dir);
  llvm::sys::path::append(path, stem + ".o");
  files.code = path.str().str();
  path = dir;
  llvm::sys::path::append(path, stem + ".glue.o");
  files.glue = path.str().str();
  return files;
}

LogicalResult zshard::linkSharedObject(ArrayRef<std::string> objectPaths,
                                       StringRef soPath, std::string &error) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    error = "no C compiler driver 'cc' on PATH to link the shared object";
    return failure();
  }
  SmallVector<StringRef> args = {*cc, "-shared", "-o", soPath};
  args.append(objectPaths.begin(), objectPaths.end());
  args.push_back("-lm");
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    error = ("linking " + soPath + " failed (" + *cc + " exited with " +
             Twine(rc) + (message.empty() ? "" : ": " + message) + ")")
                .str();
    return failure();
  }
  return success();
}
