//===- LowerToLLVM.cpp - the zshard-lower-to-llvm pipeline ----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Pipelines/Pipelines.h"
#include "zshard/Pipelines/ShardStep.h"

#include "zshard/Conversion/Passes.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void zshard::buildBufferizeStepPipeline(OpPassManager &pm,
                                        const BufferizeOptions &options) {
  // Sharding and offloading have placed every update: AdamW becomes linalg.
  pm.addPass(zshard::createLowerAdamW());
  // A batch mean left after sharding is over one slice: its input.
  pm.addPass(zshard::createLowerBatchMeans());
  // Units and checkpointing have read the module paths; CSE merges
  // identical ops of different modules only without them.
  pm.addPass(zshard::createDropModulePaths());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Collectives over one rank have folded away above; the rest call the
  // runtime. Elementwise arith on whole tensors (casts the sharding adds)
  // becomes linalg, which bufferizes.
  pm.addPass(zshard::createCollectivesToRuntime());
  pm.addPass(zshard::createAttentionToRuntime());
  pm.addPass(createConvertElementwiseToLinalgPass());
  if (options.fuseElementwise) {
    zshard::FuseElementwiseOptions fuse;
    fuse.columnSums = options.fuseColumnSums;
    pm.addPass(zshard::createFuseElementwise(fuse));
  }
  if (options.approximateMath)
    pm.addPass(zshard::createApproximateMath());
  // The CUDA target: reductions with few outputs over more threads, their
  // partial results planned like every other buffer.
  if (options.gpuReductionThreads > 0) {
    zshard::GPUSplitReductionsOptions split;
    split.threads = options.gpuReductionThreads;
    pm.addPass(zshard::createGPUSplitReductions(split));
  }

  // Phases are derived on the ops that bufferize (after fusion made new
  // ones), for zshard-tag-allocations to read after bufferization.
  if (options.tagAllocations)
    pm.addPass(zshard::createAnnotatePhases());
  pm.addNestedPass<func::FuncOp>(zshard::createLocalizeInits());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(zshard::createUpdateInPlace());
  if (options.tagAllocations)
    pm.addPass(zshard::createTagAllocations());
  if (options.runtimeMatmul) {
    zshard::MatmulToRuntimeOptions matmul;
    matmul.fuseBias = options.fuseBias;
    pm.addPass(zshard::createMatmulToRuntime(matmul));
  }
  pm.addPass(zshard::createLowerStridedCopies());
  // Deallocations right after last uses (the upstream deallocation
  // pipeline only where the step is not one straight-line block).
  zshard::DeallocAfterLastUseOptions dealloc;
  dealloc.insertDeallocs = true;
  pm.addPass(zshard::createDeallocAfterLastUse(dealloc));
}

void zshard::buildBufferizedStepToLLVMPipeline(OpPassManager &pm) {
  // Scatters (embedding backward, index_put) are scf.forall over their
  // columns: innermost, under their token loops, then serial here.
  pm.addPass(zshard::createInterchangeScatters());
  pm.addPass(createForallToForLoopPass());
  // One function per distinct op: identical blocks share their code, and
  // the step is straight-line calls that lower and compile linearly.
  pm.addPass(zshard::createOutlineComputeOps());
  // Row sums along contiguous memory: 16 partial sums in a vector, combined
  // in lane order (a fixed order, the same on every CPU).
  pm.addPass(zshard::createLaneReductions());
  // Row reductions left (rows not contiguous) with a costly body (the loss's
  // sum of exp): the body into a vectorisable loop, the sum in order after it.
  pm.addPass(zshard::createSplitReductions());
  // The remaining row reductions: adjacent rows' chains side by side, each
  // in its order.
  pm.addPass(zshard::createInterleaveReductions());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass());
  // bf16 conversions as integer ops: no __truncsfbf2 call, which libgcc 12
  // lacks, on CPUs without AVX512-BF16.
  pm.addPass(zshard::createExpandBF16());
  FinalizeMemRefToLLVMConversionPassOptions memref;
  memref.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void zshard::buildLowerToLLVMPipeline(OpPassManager &pm,
                                      const BufferizeOptions &options) {
  buildBufferizeStepPipeline(pm, options);
  buildBufferizedStepToLLVMPipeline(pm);
}

void zshard::registerZShardPipelines() {
  PassPipelineRegistration<LowerToLLVMOptions>(
      "zshard-bufferize-step",
      "The first half of zshard-lower-to-llvm: a training step on tensors "
      "to buffers with their allocation categories and deallocations, as "
      "the memory plan reads it",
      [](OpPassManager &pm, const LowerToLLVMOptions &options) {
        buildBufferizeStepPipeline(pm, options.getBufferizeOptions());
      });
  PassPipelineRegistration<LowerToLLVMOptions>(
      "zshard-lower-to-llvm",
      "Lower a training step on tensors to the LLVM dialect, ready to "
      "become a compiled artifact",
      [](OpPassManager &pm, const LowerToLLVMOptions &options) {
        buildLowerToLLVMPipeline(pm, options.getBufferizeOptions());
      });
  registerLowerToCUDAPipeline();
  registerShardStepPipeline();
}
