//===- Passes.td - zshard conversion passes ----------------*- tablegen -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_CONVERSION_PASSES_TD
#define ZSHARD_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MatmulToRuntime : Pass<"zshard-matmul-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Turn f32 matrix products on memrefs into runtime sgemm calls";
  let description = [{
    Runs after bufferization. Every `linalg.matmul` and `linalg.batch_matmul`
    on f32 memrefs with static strides, whose indexing maps are the default or
    transpose an operand, becomes a call of the runtime's
    `zshard_rt_step_sgemm` (BLAS on CPU). linalg accumulates into its
    output, so the call computes `C += op(A) op(B)`. An operand stored
    column-major (unit stride on its first dimension) folds into the
    transpose flag. Products the pass cannot map (other element types,
    dynamic strides, other maps) are left alone and become loops.

    Before:
    ```mlir
    linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>)
                  outs(%c : memref<8x2xf32>)
    ```
    After:
    ```mlir
    func.call @zshard_rt_step_sgemm(%false, %false, %c1, %c8, %c2, %c4,
        %pa, %c4, %c32, %pb, %c2, %c8, %pc, %c2, %c16) : (...) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numConverted", "converted", "Matrix products turned into calls">,
    Statistic<"numKept", "kept", "Matrix products left to become loops">
  ];
}

def LowerStridedCopies : Pass<"zshard-lower-strided-copies", "::mlir::ModuleOp"> {
  let summary = "Turn memref.copy of non-contiguous memrefs into linalg.copy";
  let description = [{
    The LLVM lowering of `memref.copy` calls an external `memrefCopy` for
    memrefs that are not contiguous. Compiled steps link no MLIR runtime
    library, so this pass rewrites those copies as `linalg.copy`, which
    becomes loops; contiguous copies stay `memref.copy` (a memcpy).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TagAllocations : Pass<"zshard-tag-allocations", "::mlir::ModuleOp"> {
  let summary = "Tell the runtime what each allocation of the step holds";
  let description = [{
    Runs after bufferization on ops that carry `zshard.phase` (from
    `--zshard-annotate-phases`, which survives bufferization). Before each
    `memref.alloc` it inserts a call
    `zshard_rt_step_set_alloc_category(i32)` so the runtime charges the
    allocation to the memory category a user of FSDP expects:

    * written in backward and read by an optimizer op: `gradients` (1);
    * other forward and backward buffers: `activations` (3), which includes
      activation gradients;
    * optimizer temporaries: `other` (5);
    * an allocation marked `zshard.category` (the buffers collectives
      receive into: gathered units `communication` (4), reduced unit
      gradients `gradients`) keeps that category.

    Users of views of a buffer count as its users. The numbers are the
    runtime's `zshard_rt_mem_category`. Allocations whose users carry no
    phase are charged to `activations`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numGradients", "gradients", "Allocations charged to gradients">,
    Statistic<"numActivations", "activations",
              "Allocations charged to activations">,
    Statistic<"numOther", "other", "Allocations charged to other">
  ];
}

def LocalizeInits : Pass<"zshard-localize-inits", "::mlir::func::FuncOp"> {
  let summary = "Give every user its own tensor.empty / zero fill, just before it";
  let description = [{
    CSE merges identical `tensor.empty` ops (and `linalg.fill`s of them) of a
    step into the first one, so one init may serve a forward op and an
    optimizer op, and bufferization then allocates it where it stands: at
    its first use, live until its last. This pass gives each top-level user
    of such an init its own copy, created right before that user, so that
    every buffer is allocated where it is first written, belongs to one
    phase (and one memory category), and lives only as long as its value.
    Runs right before bufferization.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numCopies", "copies", "Inits copied next to a user">
  ];
}

def DeallocAfterLastUse
    : Pass<"zshard-dealloc-after-last-use", "::mlir::ModuleOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Ownership-based buffer deallocation frees the buffers of a block at its
    end, so a straight-line training step would hold every activation,
    gathered unit and gradient buffer until it returns. This pass moves each
    unconditional `memref.dealloc` of a `memref.alloc` of the same block up
    to just after the last op of that block that may touch the buffer.

    An op touches the buffer when it uses the allocation or any value
    derived from it: views and casts, the aligned pointer handed to a
    runtime call, and every result of such an op in turn, so that a buffer
    given to an asynchronous collective (`zshard_rt_step_*_start`) stays
    live until the `zshard_rt_step_wait` of the handle the start returned.
    Uses nested in regions count for their top-level op. Over-approximating
    the uses only frees later, never too early.

    With `insert-deallocs`, the pass places the deallocations itself where
    it can: when every function of the module allocates only at the top
    level of a single block and returns no allocation, each allocation
    without a deallocation gets one right after its last use. This is linear
    in the step, where the upstream pipeline's simplification is quadratic
    (70 of 81 seconds of an 80-layer plan). Otherwise it runs the upstream
    buffer-deallocation pipeline first and then moves its deallocations.

    With this pass `zshard.release` is honoured: a unit gathered for forward
    is used by nothing after its release, so its buffer is freed there.
  }];
  let options = [
    Option<"insertDeallocs", "insert-deallocs", "bool", "false",
           "Place the deallocations (upstream pipeline only as fallback)">
  ];
  // The upstream deallocation pipeline, run as the fallback, builds ops of
  // these dialects.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numMoved", "moved", "Deallocations moved earlier">,
    Statistic<"numInserted", "inserted", "Deallocations inserted">
  ];
}

def MemoryPlanPass : Pass<"zshard-memory-plan", "::mlir::ModuleOp"> {
  let summary = "Report the static per-rank memory plan of a bufferized step";
  let description = [{
    Runs on the step once its buffers are allocated and deallocated
    (after the buffer-deallocation pipeline and `--zshard-tag-allocations`)
    and walks it in program order, as the runtime executes it: each
    `memref.alloc` is charged to the category the preceding
    `zshard_rt_step_set_alloc_category` call selected and released at its
    `memref.dealloc`. Dynamic sizes (this rank's part of a shard) are bounded
    from above by interval arithmetic over their index computations, so the
    plan bounds every rank.

    Emits a remark on the step with the peak of the total and the bytes
    live by category at that moment, and, with `report=FILE`, writes the
    plan as JSON (peaks, live at peak, and the live-bytes timeline with
    positions 0..1). It does not count the buffers the runtime holds around
    the step (arguments and results); `zshard-compile --memory-report` adds
    them by role. The IR is unchanged.
  }];
  let options = [
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the plan as JSON to this file">
  ];
}

def ApproximateMath : Pass<"zshard-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replace libm calls by vectorisable polynomial approximations";
  let description = [{
    Rewrites f32 `math.tanh`, `math.exp`, `math.expm1`, `math.log`,
    `math.log1p`, `math.erf` and friends into MLIR's polynomial
    approximations (arith ops, a few ULP of error), so the loops holding them
    vectorise instead of calling libm per element. GELU's tanh and softmax's
    exp dominate the non-matmul time of a GPT step without it. The e2e tests
    against the NumPy reference bound the resulting error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::x86vector::X86VectorDialect"];
}

def CollectivesToRuntime
    : Pass<"zshard-collectives-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Turn zshard collectives into calls of the runtime";
  let description = [{
    Runs on tensors, before bufferization. Each collective becomes a call of
    the runtime's `zshard_rt_step_*` entry on buffers: its input through
    `bufferization.to_buffer` (read only), its result a fresh `memref.alloc`
    that `bufferization.to_tensor` hands back, so one-shot bufferization
    folds both away. The group is the grid-axes mask of the op, the element
    type and reduction become the runtime's codes (f32 0, bf16 1, f16 2,
    i32 3; sum 0, avg 1, max 2). An async start becomes the `_start` call
    returning a handle and its `zshard.wait` the `zshard_rt_step_wait` call,
    after which the result is read. `zshard.release` is dropped (buffer
    deallocation frees the gathered buffer after its last use); `zshard.unit`
    and `shard.grid` are erased once nothing refers to them, the manifest
    having recorded them.

    Before:
    ```mlir
    %full = zshard.all_gather %shard on @world[0] : tensor<2xf32> -> tensor<8xf32>
    ```
    After:
    ```mlir
    %src = bufferization.to_buffer %shard read_only : tensor<2xf32> to memref<2xf32>
    %dst = memref.alloc() : memref<8xf32>
    call @zshard_rt_step_all_gather(%c1_i64, %psrc, %pdst, %c2_i64, %c0_i32)
    %full = bufferization.to_tensor %dst restrict writable : memref<8xf32> to tensor<8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // ZSHARD_CONVERSION_PASSES_TD
