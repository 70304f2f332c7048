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

#include <string>

namespace mlir {
namespace zshard {

/// What the bufferization of a step (buildBufferizeStepPipeline) does, the
/// same for both targets.
struct BufferizeOptions {
  /// Fuse chains of elementwise linalg ops before bufferization.
  bool fuseElementwise = true;
  /// With it, column sums of elementwise results computed by their
  /// producers (zshard-fuse-elementwise column-sums; the CUDA target turns
  /// it off).
  bool fuseColumnSums = true;
  /// Matrix products as runtime gemm calls (BLAS, cuBLAS) instead of loops
  /// or kernels.
  bool runtimeMatmul = true;
  /// Bias adds of products folded into their calls
  /// (zshard_rt_step_sgemm_bias, host only: the CUDA target turns it off).
  bool fuseBias = true;
  /// Polynomial approximations instead of libm / libdevice calls.
  bool approximateMath = true;
  /// Annotate phases and charge each allocation to a memory category
  /// (needs a training step; see zshard-tag-allocations).
  bool tagAllocations = true;
  /// Split reductions with fewer outputs than this over more GPU threads
  /// (zshard-gpu-split-reductions); 0, the CPU target's, splits none.
  int64_t gpuReductionThreads = 0;
};

/// The CUDA target's changes to `options`: reductions split over
/// `reductionThreads` threads, no bias folded into products (cuBLAS takes
/// them; zshard_rt_step_sgemm_bias is host only) and no column sums fused
/// into their producers (zshard-gpu-split-reductions takes sums with one
/// result).
void adaptBufferizeOptionsToCUDA(BufferizeOptions &options,
                                 int64_t reductionThreads);

/// The bufferization options as pipeline options, for every pipeline that
/// bufferizes a step (`zshard-lower-to-llvm`, `zshard-lower-to-cuda`,
/// `zshard-pipeline`). `Base` chains option groups into one struct.
template <typename Derived, typename Base = PassPipelineOptions<Derived>>
struct BufferizePipelineOptions : public Base {
  mlir::detail::PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse chains of elementwise linalg ops before "
                     "bufferization"),
      llvm::cl::init(true)};
  mlir::detail::PassOptions::Option<bool> runtimeMatmul{
      *this, "runtime-matmul",
      llvm::cl::desc("Turn matrix products into runtime gemm calls (BLAS, "
                     "cuBLAS on CUDA) instead of loops or kernels"),
      llvm::cl::init(true)};
  mlir::detail::PassOptions::Option<bool> fuseBias{
      *this, "fuse-bias",
      llvm::cl::desc("Fold bias adds of products into their runtime calls "
                     "(host only; the CUDA pipelines ignore it)"),
      llvm::cl::init(true)};
  mlir::detail::PassOptions::Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Polynomial approximations instead of libm or "
                     "libdevice calls for tanh, exp, log, erf, ..."),
      llvm::cl::init(true)};
  mlir::detail::PassOptions::Option<bool> tagAllocations{
      *this, "tag-allocations",
      llvm::cl::desc("Annotate phases and charge each allocation to a memory "
                     "category (needs a training step; see "
                     "zshard-tag-allocations)"),
      llvm::cl::init(true)};

  /// The bufferization options.
  BufferizeOptions getBufferizeOptions() const {
    BufferizeOptions options;
    options.fuseElementwise = fuseElementwise;
    options.runtimeMatmul = runtimeMatmul;
    options.fuseBias = fuseBias;
    options.approximateMath = approximateMath;
    options.tagAllocations = tagAllocations;
    return options;
  }
};

/// Options of `zshard-lower-to-llvm` and `zshard-bufferize-step`.
struct LowerToLLVMOptions : public BufferizePipelineOptions<LowerToLLVMOptions> {
};

/// Lowers a training step on tensors to the LLVM dialect: bufferization with
/// results turned into out-parameters, matrix products to runtime calls,
/// deallocation, loops, and the LLVM conversions. Step arguments become bare
/// pointers (see docs/passes.md, "Calling convention").
/// Tensors to buffers: collectives to runtime calls, fusion, bufferization,
/// out-params, allocation categories, runtime matmuls and deallocation.
/// The memory plan (zshard-memory-plan) reads the step at this point.
void buildBufferizeStepPipeline(OpPassManager &pm,
                                const BufferizeOptions &options);

/// The bufferized step to the LLVM dialect (loops, LLVM conversions).
void buildBufferizedStepToLLVMPipeline(OpPassManager &pm);

/// Both of the above.
void buildLowerToLLVMPipeline(OpPassManager &pm,
                              const BufferizeOptions &options);

/// Options of the CUDA half of `zshard-lower-to-cuda`: how kernels are
/// shaped and which GPU binary is embedded.
struct CUDATargetOptions {
  /// The SM architecture the kernels are compiled for.
  std::string chip = "sm_90";
  /// What gpu-module-to-binary embeds: `isa` (PTX, JIT-compiled by the
  /// driver when the module loads), `bin` (a cubin for `chip`, needs
  /// ptxas) or `fatbin` (cubin and PTX, needs ptxas and fatbinary).
  std::string format = "isa";
  /// The CUDA toolkit (libdevice, ptxas); "" looks for one (see
  /// findCUDAToolkit).
  std::string toolkit;
  /// Threads a block of every elementwise / reduction kernel.
  int64_t blockSize = 256;
  /// Reductions with fewer outputs are split to about this many threads
  /// (zshard-gpu-split-reductions, before bufferization).
  int64_t reductionThreads = 65536;
};

/// The CUDA target's pipeline options, shared by `zshard-lower-to-cuda`,
/// `zshard-bufferized-step-to-cuda` and `zshard-pipeline`.
template <typename Derived, typename Base = PassPipelineOptions<Derived>>
struct CUDATargetPipelineOptions : public Base {
  mlir::detail::PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("SM architecture of the kernels"),
      llvm::cl::init("sm_90")};
  mlir::detail::PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Embedded GPU binary: isa (PTX), bin (cubin) or "
                     "fatbin"),
      llvm::cl::init("isa")};
  mlir::detail::PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit directory (libdevice, ptxas); empty: "
                     "$CUDA_HOME, $CUDA_PATH or /usr/local/cuda"),
      llvm::cl::init("")};
  mlir::detail::PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads a block of the elementwise/reduction kernels"),
      llvm::cl::init(CUDATargetOptions().blockSize)};
  mlir::detail::PassOptions::Option<int64_t> reductionThreads{
      *this, "reduction-threads",
      llvm::cl::desc("Split reductions with fewer outputs than this to about "
                     "this many threads (zshard-gpu-split-reductions)"),
      llvm::cl::init(CUDATargetOptions().reductionThreads)};

  /// The CUDA target options.
  CUDATargetOptions getTargetOptions() const {
    CUDATargetOptions options;
    options.chip = chip;
    options.format = format;
    options.toolkit = toolkit;
    options.blockSize = blockSize;
    options.reductionThreads = reductionThreads;
    return options;
  }
};

/// Options of `zshard-bufferized-step-to-cuda`.
struct BufferizedStepToCUDAOptions
    : public CUDATargetPipelineOptions<BufferizedStepToCUDAOptions> {};

/// Options of `zshard-lower-to-cuda`: the bufferization options and the
/// CUDA target's.
struct LowerToCUDAOptions
    : public CUDATargetPipelineOptions<
          LowerToCUDAOptions, BufferizePipelineOptions<LowerToCUDAOptions>> {};

/// The bufferized step (after buildBufferizeStepPipeline) to the LLVM
/// dialect with its elementwise and reduction ops as CUDA kernels: linalg
/// to parallel loops, one kernel per outermost loop nest (outlined into a
/// gpu.module), a check that no memory access is left on the host, kernels
/// to NVVM and to a gpu.binary, host code to LLVM with gpu.launch_func
/// left for the translation (calls of the mgpu* host ABI).
void buildBufferizedStepToCUDAPipeline(OpPassManager &pm,
                                       const CUDATargetOptions &options);

/// buildBufferizeStepPipeline, then buildBufferizedStepToCUDAPipeline.
void buildLowerToCUDAPipeline(OpPassManager &pm,
                              const LowerToCUDAOptions &options);

/// The CUDA toolkit to use: `$CUDA_HOME`, `$CUDA_PATH`, or
/// `/usr/local/cuda`, the first holding `nvvm/libdevice`; "" when none.
std::string findCUDAToolkit();

/// The best binary format the toolkit at `toolkit` can build: `fatbin`
/// (cubin and PTX) when it has ptxas and fatbinary, else `isa` (PTX, which
/// the driver compiles when the module loads).
std::string getBestCUDABinaryFormat(StringRef toolkit);

/// Registers the zshard pipelines with the global registry.
void registerZShardPipelines();

/// Registers `zshard-lower-to-cuda` (part of registerZShardPipelines).
void registerLowerToCUDAPipeline();

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_PIPELINES_PIPELINES_H
