//===- Pipelines.h - zshard pass pipelines ----------------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Pass pipelines, each built from a PassPipelineOptions struct and
/// registered in zshard-opt; every stage is also a pass of its own.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_PIPELINES_PIPELINES_H
#define ZSHARD_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace zshard {

/// Options of `zshard-lower-to-llvm`.
struct LowerToLLVMOptions : public PassPipelineOptions<LowerToLLVMOptions> {
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse chains of elementwise linalg ops before "
                     "bufferization"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> runtimeMatmul{
      *this, "runtime-matmul",
      llvm::cl::desc("Turn f32 matrix products into runtime sgemm calls "
                     "(BLAS) instead of loops"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Polynomial approximations instead of libm calls for "
                     "tanh, exp, log, erf, ..."),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tagAllocations{
      *this, "tag-allocations",
      llvm::cl::desc("Annotate phases and charge each allocation to a memory "
                     "category (needs a training step; see "
                     "zshard-tag-allocations)"),
      llvm::cl::init(true)};
};

/// Lowers a training step on tensors to the LLVM dialect: bufferization with
/// results turned into out-parameters, matrix products to runtime calls,
/// deallocation, loops, and the LLVM conversions. Step arguments become bare
/// pointers (see docs/passes.md, "Calling convention").
/// Tensors to buffers: collectives to runtime calls, fusion, bufferization,
/// out-params, allocation categories, runtime matmuls and deallocation.
/// The memory plan (zshard-memory-plan) reads the step at this point.
void buildBufferizeStepPipeline(OpPassManager &pm,
                                const LowerToLLVMOptions &options);

/// The bufferized step to the LLVM dialect (loops, LLVM conversions).
void buildBufferizedStepToLLVMPipeline(OpPassManager &pm);

/// Both of the above.
void buildLowerToLLVMPipeline(OpPassManager &pm,
                              const LowerToLLVMOptions &options);

/// Registers the zshard pipelines with the global registry.
void registerZShardPipelines();

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_PIPELINES_PIPELINES_H
