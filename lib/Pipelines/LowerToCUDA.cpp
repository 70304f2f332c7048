//===- LowerToCUDA.cpp - the zshard-lower-to-cuda pipeline ----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The CUDA target: after the bufferization shared with the CPU target,
/// every elementwise and reduction op becomes a kernel (parallel loops,
/// collapsed and tiled into blocks, mapped, outlined), host code keeps
/// runtime calls (cuBLAS matmuls, NCCL collectives) and allocations through
/// the runtime's hooks, and the kernels are compiled to an embedded GPU
/// binary launched through the mgpu* host ABI the runtime provides.
///
//===----------------------------------------------------------------------===//

#include "zshard/Pipelines/Pipelines.h"

#include "zshard/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace mlir;

std::string zshard::findCUDAToolkit() {
  SmallVector<std::string> candidates;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (std::optional<std::string> value = llvm::sys::Process::GetEnv(variable))
      candidates.push_back(*value);
  candidates.push_back("/usr/local/cuda");
  for (const std::string &candidate : candidates) {
    SmallString<128> libdevice(candidate);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice");
    if (llvm::sys::fs::is_directory(libdevice))
      return candidate;
  }
  return "";
}

std::string zshard::getBestCUDABinaryFormat(StringRef toolkit) {
  if (toolkit.empty())
    return "isa";
  for (StringRef tool : {"ptxas", "fatbinary"}) {
    SmallString<128> path(toolkit);
    llvm::sys::path::append(path, "bin", tool);
    if (!llvm::sys::fs::can_execute(path))
      return "isa";
  }
  return "fatbin";
}

void zshard::buildBufferizedStepToCUDAPipeline(
    OpPassManager &pm, const CUDATargetOptions &options) {
  // Kernels: one outermost scf.parallel per op that touches memory, tiled
  // into blocks, mapped to the grid and outlined. No canonicalization until
  // the loops are gpu.launch ops: it would fold the one-iteration loops of
  // scalar ops back onto the host (and merge the block and thread loops).
  // Scatters (embedding backward, index_put) are scf.forall over columns:
  // parallel loops, so kernels like the rest.
  pm.addPass(createForallToParallelLoopPass());
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(zshard::createPrepareLinalgForGPU());
  func.addPass(createConvertLinalgToParallelLoopsPass());
  zshard::GPUTileParallelLoopsOptions tile;
  tile.blockSize = options.blockSize;
  func.addPass(zshard::createGPUTileParallelLoops(tile));
  func.addPass(createGpuMapParallelLoopsPass());
  func.addPass(createConvertParallelLoopToGpuPass());
  // Constants and index computations folded here are sunk into the
  // kernels by the outlining instead of becoming kernel arguments.
  func.addPass(createCanonicalizerPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(zshard::createGPUMergeKernelModules());
  pm.addPass(zshard::createCheckHostMemoryAccess());
  pm.addNestedPass<func::FuncOp>(zshard::createGPUAsyncLaunches());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Device code: NVVM, with libdevice for the math left as calls.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  // Host code, as on the CPU target: allocations through the runtime's
  // generic hooks (device memory when the device is CUDA), bare pointers.
  pm.addPass(createConvertMathToLLVMPass());
  FinalizeMemRefToLLVMConversionPassOptions memref;
  memref.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  // Launches stay gpu.launch_func on LLVM types; the translation to LLVM
  // IR turns them (and the gpu.binary) into mgpu* calls.
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath =
      options.toolkit.empty() ? findCUDAToolkit() : options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void zshard::adaptBufferizeOptionsToCUDA(BufferizeOptions &options,
                                         int64_t reductionThreads) {
  options.gpuReductionThreads = reductionThreads;
  options.fuseBias = false;
  options.fuseColumnSums = false;
}

void zshard::buildLowerToCUDAPipeline(OpPassManager &pm,
                                      const LowerToCUDAOptions &options) {
  CUDATargetOptions target = options.getTargetOptions();
  BufferizeOptions bufferize = options.getBufferizeOptions();
  adaptBufferizeOptionsToCUDA(bufferize, target.reductionThreads);
  buildBufferizeStepPipeline(pm, bufferize);
  buildBufferizedStepToCUDAPipeline(pm, target);
}

void zshard::registerLowerToCUDAPipeline() {
  PassPipelineRegistration<BufferizedStepToCUDAOptions>(
      "zshard-bufferized-step-to-cuda",
      "The CUDA half of zshard-lower-to-cuda: a bufferized step to the LLVM "
      "dialect with kernels for its elementwise and reduction ops",
      [](OpPassManager &pm, const BufferizedStepToCUDAOptions &options) {
        buildBufferizedStepToCUDAPipeline(pm, options.getTargetOptions());
      });
  PassPipelineRegistration<LowerToCUDAOptions>(
      "zshard-lower-to-cuda",
      "Lower a training step on tensors to the LLVM dialect with its "
      "elementwise and reduction ops as CUDA kernels in an embedded GPU "
      "binary, matrix products and collectives as runtime calls",
      buildLowerToCUDAPipeline);
}
