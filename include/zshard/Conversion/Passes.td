//===- Passes.td - zshard conversion passes ----------------*- tablegen -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_CONVERSION_PASSES_TD
#define ZSHARD_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MatmulToRuntime : Pass<"zshard-matmul-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Turn f32 and bf16 matrix products on memrefs into runtime gemm calls";
  let description = [{
    Runs after bufferization. Every `linalg.matmul` and `linalg.batch_matmul`
    on f32 memrefs with static strides, whose indexing maps are the default or
    transpose an operand, becomes a call of the runtime's
    `zshard_rt_step_sgemm` (BLAS on CPU, cuBLAS on CUDA); with bf16 inputs
    and an f32 output it calls `zshard_rt_step_gemm_bf16` instead, which
    takes the same arguments (element strides of each operand's own type)
    and accumulates in f32. linalg accumulates into its
    output, so the call computes `C += op(A) op(B)` (its last argument,
    `accumulate`, is 1). When the output was zeroed just before — a
    `linalg.fill` of a float zero into exactly that memref, earlier in the
    block with only ops that touch no memory (or only allocate) in between,
    the memref a view of an allocation of the step that neither input
    views — the fill is erased and the call computes `C = op(A) op(B)`
    (`accumulate` 0, BLAS's beta 0): the output is written once instead of
    zeroed, then read and written. An operand stored
    column-major (unit stride on its first dimension) folds into the
    transpose flag. Products the pass cannot map (other element types,
    dynamic strides, other maps) are left alone and become loops.

    With `fuse-bias` (the CPU target's pipelines set it), an f32 product
    whose fresh output is zero-filled and then read only by a bias add —
    a `linalg.generic` adding it (identity map) and a contiguous f32 vector
    read by column (`(d0, d1) -> (d1)`) into a memref neither the product's
    operands nor the vector view, later in the block with only ops that
    touch no memory or set the next allocation's category in between —
    becomes one call of `zshard_rt_step_sgemm_bias` at the add, writing the
    add's output with the bias's address as its last argument; the add, the
    fill and the product's own allocation (and its category call) are
    erased. The runtime adds the bias in the product's epilogue (oneDNN) or
    right after it, so each element is rounded as the separate add rounded
    it. The CUDA target leaves it off: the entry runs on the host only.

    When the bias add's output is a fresh allocation read only by a
    residual add — a `linalg.generic` adding it (or an expand/collapse_shape
    of it) and another f32 memref `X` into a third, identity maps, later in
    the block with only ops that touch no memory, allocate or set the next
    allocation's category in between, `X` and the output contiguous rows of
    the product's columns, the output no view of `X`, the operands or the
    bias — the call moves to the residual add and becomes
    `zshard_rt_step_sgemm_bias_add`, writing the residual add's output with
    `X`'s address, leading dimension and batch stride last; the residual
    add, the views and the bias add's output are erased. Each element is
    still the product plus the bias, rounded, plus `X`, rounded.

    Before:
    ```mlir
    linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>)
                  outs(%c : memref<8x2xf32>)
    ```
    After:
    ```mlir
    func.call @zshard_rt_step_sgemm(%false, %false, %c1, %c8, %c2, %c4,
        %pa, %c4, %c32, %pb, %c2, %c8, %pc, %c2, %c16, %true) : (...) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"fuseBias", "fuse-bias", "bool", /*default=*/"false",
           "Fold a bias add of a product's fresh output into the call "
           "(zshard_rt_step_sgemm_bias; host only: the CPU target)">
  ];
  let statistics = [
    Statistic<"numConverted", "converted", "Matrix products turned into calls">,
    Statistic<"numKept", "kept", "Matrix products left to become loops">,
    Statistic<"numFoldedFills", "folded-fills",
              "Zero-fills of outputs folded into the products (beta 0)">,
    Statistic<"numFusedBiases", "fused-biases",
              "Bias adds folded into the products (fuse-bias)">,
    Statistic<"numFusedResiduals", "fused-residuals",
              "Residual adds folded into the products after their bias adds "
              "(fuse-bias)">
  ];
}

def LowerStridedCopies : Pass<"zshard-lower-strided-copies", "::mlir::ModuleOp"> {
  let summary = "Turn memref.copy of non-contiguous memrefs into linalg.copy";
  let description = [{
    The LLVM lowering of `memref.copy` calls an external `memrefCopy` for
    memrefs that are not contiguous. Compiled steps link no MLIR runtime
    library, so this pass rewrites those copies as `linalg.copy`, which
    becomes loops; contiguous copies stay `memref.copy` (a memcpy). A copy
    of a view onto itself (the same value, or two equal subviews: what an
    in-place `tensor.parallel_insert_slice` bufferizes to) is erased.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def SplitReductions : Pass<"zshard-split-reductions", "::mlir::ModuleOp"> {
  let summary = "Split a row reduction with a costly body into a vectorisable loop and the ordered sum";
  let description = [{
    A `linalg.generic` on memrefs that reduces its innermost loop into one
    float output by `arith.addf`, where the reduced value takes at least
    `min-ops` body ops to compute -- the loss's sum of `exp(x - max)` over
    the vocabulary is the case that matters -- becomes loops that, for each
    output element and each `chunk` of the reduced dimension, first compute
    the reduced values into a stack buffer (a loop without a carried
    dependence, which LLVM vectorises) and then add them to the accumulator
    in order. The additions, their order and the elementwise arithmetic are
    those of the loops `convert-linalg-to-loops` builds, so the results are
    bit for bit the same; what changes is that the polynomial of `exp` runs
    at the host's SIMD width instead of once per element inside the
    latency-bound sum. Cheap bodies (a LayerNorm's `(x - mean)^2`) are left
    to `convert-linalg-to-loops`: the sum's latency is their cost either way.

    Before:
    ```mlir
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<4x1000xf32>) outs(%sum : memref<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %e = ... 20 ops of exp(%in) ...
      %s = arith.addf %acc, %e : f32
      linalg.yield %s : f32
    }
    ```
    After (`chunk=256`):
    ```mlir
    %buf = memref.alloca() : memref<256xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %init = memref.load %sum[%i] : memref<4xf32>
      %r = scf.for %jj = %c0 to %c1000 step %c256 iter_args(%a = %init) -> (f32) {
        %n = arith.minsi ...
        scf.for %j = %c0 to %n step %c1 {   // vectorised by LLVM
          ... %e = exp(%x[%i, %jj + %j]) ...
          memref.store %e, %buf[%j] : memref<256xf32>
        }
        %s = scf.for %j = %c0 to %n step %c1 iter_args(%b = %a) -> (f32) {
          %t = memref.load %buf[%j] : memref<256xf32>
          %b2 = arith.addf %b, %t : f32
          scf.yield %b2 : f32
        }
        scf.yield %s : f32
      }
      memref.store %r, %sum[%i] : memref<4xf32>
    }
    ```
    Runs in the CPU lowering after `zshard-outline-compute-ops`, before the
    loops are built.
  }];
  let options = [
    Option<"chunk", "chunk", "int64_t", "256",
           "Elements of the reduced dimension computed into the stack buffer "
           "before they are summed">,
    Option<"minOps", "min-ops", "unsigned", "8",
           "The fewest body ops computing the reduced value for a split">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numSplit", "split", "Row reductions split">
  ];
}

def LaneReductions : Pass<"zshard-lane-reductions", "::mlir::ModuleOp"> {
  let summary = "Sum a row reduction along contiguous memory in a vector of lanes, combined in lane order";
  let description = [{
    A `linalg.generic` on memrefs that sums its innermost loop into one
    float output by `arith.addf` (a LayerNorm's row sums and its backward's
    row dot products, the loss's sums over the vocabulary), where every
    input the reduced loop indexes reads it as its innermost, unit-stride
    dimension, the reduced loop has at least `2 * lanes` iterations and the
    summand is computed by arith and math ops (no `linalg.index`), becomes
    vector code in a fixed order: for each output element, lane `l` of a
    `vector<lanes x T>` sums the elements `l`, `l + lanes`, `l + 2 lanes`,
    ... of the row, in that order, from the first of them; then the output's
    value takes the lanes one by one, lane 0 first, and after them the
    elements past the last whole group of `lanes`, in order. The summand's
    ops run on vectors (the row's inputs as vector loads, the others
    broadcast).

    The order is fixed by the IR, not by LLVM, so the result is the same
    on every CPU and at every SIMD width (a vector of 16 floats is one
    AVX-512 register, two AVX ones, four SSE ones; the lowering emits no
    fast-math flags); it is not the order of `convert-linalg-to-loops`, so
    the last bits of a sum differ from the in-order loop's. An in-order sum
    is one dependent chain of additions (about 4 cycles each); the lanes
    are 16 chains, read with vector loads, and the summand runs at the
    SIMD width. A row of 256 is still a chain of 16 vector additions and
    then 16 scalar ones, so `rows` consecutive rows of the innermost
    parallel loop (4 by default, where its extent is a multiple of it) go
    through one loop together, their chains independent, each row summed
    in its own order as above: the same results (the LayerNorm class of
    the d256 GPT step 6.5 -> 6.0 ms under perf).

    Before:
    ```mlir
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x, %y : memref<4x100xf32>, memref<4x100xf32>)
        outs(%dot : memref<4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    ```
    After (`lanes=16`):
    ```mlir
    scf.for %i = %c0 to %c4 step %c1 {
      %init = memref.load %dot[%i] : memref<4xf32>
      %a0 = vector.load %x[%i, %c0] : memref<4x100xf32>, vector<16xf32>
      %b0 = vector.load %y[%i, %c0] : memref<4x100xf32>, vector<16xf32>
      %p0 = arith.mulf %a0, %b0 : vector<16xf32>
      %lanes = scf.for %j = %c16 to %c96 step %c16
          iter_args(%v = %p0) -> (vector<16xf32>) {
        ... %p = %x[%i, %j:16] * %y[%i, %j:16] ...
        %v2 = arith.addf %v, %p : vector<16xf32>
        scf.yield %v2 : vector<16xf32>
      }
      %l0 = vector.extract %lanes[0] : f32 from vector<16xf32>
      %s0 = arith.addf %init, %l0 : f32
      ... lanes 1 to 15 ...
      %s = scf.for %j = %c96 to %c100 step %c1 iter_args(%t = %s15) -> (f32) {
        ... %t + %x[%i, %j] * %y[%i, %j] ...
      }
      memref.store %s, %dot[%i] : memref<4xf32>
    }
    ```
    Runs in the CPU lowering after `zshard-outline-compute-ops`, before
    `zshard-split-reductions` and `zshard-interleave-reductions`, which
    take the row reductions it leaves (rows not contiguous in memory).
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", "16",
           "Partial sums a row is split into (the vector width)">,
    Option<"rows", "rows", "int64_t", "4",
           "Consecutive rows summed together (where the innermost parallel "
           "loop's extent is a multiple of it; else one)">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let statistics = [
    Statistic<"numLaned", "laned", "Row reductions summed in lanes">
  ];
}

def InterleaveReductions : Pass<"zshard-interleave-reductions",
                                 "::mlir::ModuleOp"> {
  let summary = "Advance the row reductions of adjacent rows together, each row in its own order";
  let description = [{
    A `linalg.generic` on memrefs that sums (or multiplies) its innermost
    loop into one float output (a LayerNorm's row sums, the loss's sum over
    the vocabulary, a bias gradient's sum over tokens) is, lowered as it is,
    one dependent chain of additions per row: LLVM may not reorder float
    additions, so each waits for the last (about 4 cycles on this CPU) and
    no SIMD lane is used. (A maximum or integer arithmetic is exact in any
    order; LLVM vectorises those along the row, and this pass leaves them.) This pass takes `lanes` rows of the innermost
    parallel loop the output uses at a time and moves the reduced loop
    outside a loop over them: the `lanes` accumulators live in a stack
    buffer (registers once LLVM unrolls the constant-trip lane loop and
    promotes it), their chains are independent and, where LLVM's SLP or
    loop vectoriser packs them, one vector. Each row's values are still
    combined one at a time in the original order, starting from the
    output's value, so the results are bit for bit those of
    `convert-linalg-to-loops`; rows beyond the last whole group of `lanes`
    form one smaller group. Rows that are not adjacent in memory are read
    with a gather an element; a reduction reading two or more inputs that
    way (a row dot product) stays as it is, where two gathers cost more
    than the chain they break.

    Before:
    ```mlir
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<20x768xf32>) outs(%sum : memref<20xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    }
    ```
    After (`lanes=8`):
    ```mlir
    %buf = memref.alloca() : memref<8xf32>
    scf.for %r = %c0 to %c16 step %c8 {
      scf.for %l = %c0 to %c8 step %c1 {     // accumulators in
        %i = arith.addi %r, %l : index
        %a = memref.load %sum[%i] : memref<20xf32>
        memref.store %a, %buf[%l] : memref<8xf32>
      }
      scf.for %j = %c0 to %c768 step %c1 {
        scf.for %l = %c0 to %c8 step %c1 {   // independent chains
          %i = arith.addi %r, %l : index
          %x = memref.load %x[%i, %j] : memref<20x768xf32>
          %b = memref.load %buf[%l] : memref<8xf32>
          %s = arith.addf %b, %x : f32
          memref.store %s, %buf[%l] : memref<8xf32>
        }
      }
      scf.for %l = %c0 to %c8 step %c1 { ... }  // accumulators out
    }
    ... the same for rows 16 to 19, with 4 lanes ...
    ```
    Runs in the CPU lowering after `zshard-split-reductions`, which takes
    the reductions whose summand is costly.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", "8",
           "Rows whose reductions advance together">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numInterleaved", "interleaved", "Row reductions interleaved">
  ];
}

def InterchangeScatters : Pass<"zshard-interchange-scatters", "::mlir::ModuleOp"> {
  let summary = "Run a scatter's forall over the columns innermost, under its token loops";
  let description = [{
    A scatter-add (an embedding's backward, `index_put` with accumulate)
    is an `scf.forall` over the feature columns, each walking the tokens in
    order (one GPU thread a column, race-free). Run serially on a CPU, that
    is one pass over the tokens per column, one float of each row at a time.
    This pass makes the forall the innermost loop(s), under the loops it
    held, so that each token's row is walked contiguously and vectorises:
    the forall's iterations touch disjoint elements, and for each column
    the tokens still come in their order, so every element receives the
    same additions in the same order (the same result, bit for bit). The
    ops of the body that do not depend on the columns (the token's index
    and row) move out of the new inner loops when they have no memory
    effects, or are loads of a buffer the body does not store to while
    every buffer it stores to is an allocation of the step (and the
    forall's bounds are constants with at least one iteration).

    The forall must have no results, hold one perfectly nested `scf.for`
    nest without iter_args and with bounds defined outside it, and besides
    it only ops without memory effects (before it) or unused ones (after
    it); any other forall is left alone. The CPU pipeline runs it before
    `scf-forall-to-for`; the d256 GPT step's embedding backward goes from
    about 0.7 ms to a few hundredths.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numInterchanged", "interchanged", "Foralls made innermost">
  ];
}

def OutlineComputeOps : Pass<"zshard-outline-compute-ops", "::mlir::ModuleOp"> {
  let summary = "Outline each linalg op of a bufferized step into a function shared by identical ops";
  let description = [{
    Runs after bufferization and the memory plan, before the loops are
    built. Each top-level `linalg` op on memrefs of a function becomes a
    call of a private `no_inline` function that computes it, taking its
    buffers (and scalars) as arguments; constants and views with constant
    operands (`memref.expand_shape`, `collapse_shape`, `subview`,
    `transpose`, `cast`, `reinterpret_cast`) move in with it. Ops that
    compute the same thing on other buffers (the same op of another
    transformer block, forward or backward) call the same function: their
    discardable attributes (phases, module paths) are dropped from the
    outlined copy, and functions are compared structurally
    (`OperationEquivalence`, ignoring locations). A 12-layer GPT step then
    compiles one function per distinct op instead of 12 copies of each,
    and the step itself is a straight-line sequence of calls, allocations
    and deallocations, so lowering and LLVM codegen grow linearly with depth.
    An op whose buffers reach it through other views (a dynamic shape, a
    layout the bare-pointer calling convention cannot pass) stays inline.
    The buffers, their allocations and deallocations are untouched, so the
    memory plan is the same.

    An argument that is, at every call of its function, a buffer the step
    allocated (views move in, so an argument is the buffer itself), beside
    arguments that are all other allocations or the step's arguments, is
    marked `llvm.noalias`: no other pointer the function sees reaches that
    memory. LLVM then keeps the loads of the other buffers (an embedding's
    token ids) out of the loops that store to it and vectorises them, and
    keeps a row sum in a register without a run-time check of overlaps. A
    step argument is never marked: the runtime passes one buffer for an
    argument and its in-place out-parameter (`zshard-update-in-place`).

    Before:
    ```mlir
    func.func @step(%a: memref<4xf32>, %b: memref<4xf32>) {
      %cst = arith.constant 1.0 : f32
      linalg.fill ins(%cst : f32) outs(%a : memref<4xf32>)
      linalg.fill ins(%cst : f32) outs(%b : memref<4xf32>)
      return
    }
    ```
    After:
    ```mlir
    func.func private @step.compute.0(%arg0: memref<4xf32>) attributes {no_inline} {
      %cst = arith.constant 1.0 : f32
      linalg.fill ins(%cst : f32) outs(%arg0 : memref<4xf32>)
      return
    }
    func.func @step(%a: memref<4xf32>, %b: memref<4xf32>) {
      call @step.compute.0(%a) : (memref<4xf32>) -> ()
      call @step.compute.0(%b) : (memref<4xf32>) -> ()
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numFunctions", "functions", "Functions outlined">,
    Statistic<"numShared", "shared", "Ops calling a function outlined for an identical op">,
    Statistic<"numKept", "kept", "Ops left inline (an argument the calling convention cannot pass)">
  ];
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
    * an allocation marked `zshard.category = #zshard.category<...>` (the
      buffers collectives receive into: gathered units `communication` (4),
      reduced unit gradients `gradients`; attention outputs `activations`)
      keeps that category.

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

def GPUSplitReductions
    : Pass<"zshard-gpu-split-reductions", "::mlir::ModuleOp"> {
  let summary = "Split reductions with few outputs over more GPU threads";
  let description = [{
    The CUDA target runs a reduction as one thread per output element, its
    reduced dimension a loop in that thread. A bias or LayerNorm gradient
    (1024 outputs, each a sum over 8192 tokens) then occupies 4 blocks of
    an H200's 132 multiprocessors, and the loss's sums over the vocabulary
    read rows a thread apiece.

    This pass runs on tensors, before bufferization (so that the memory
    plan sees the partial results). A `linalg.generic` with one reduction
    dimension of static size `R`, projected-permutation maps, no
    `linalg.index`, outputs that do not depend on the reduced dimension,
    each reduced by one commutative float combiner (`addf`, `mulf`,
    `maximumf`, `minimumf`, `maxnumf`, `minnumf`), that is not a
    contraction and has fewer than `threads` output elements `P`, is split
    into:

    - a generic with one more parallel dimension of size `S` (a power of
      two dividing `R`, the smallest with `P * S >= threads` and
      `R / S >= min-chunk`, else the largest with `R / S >= min-chunk`),
      each of its threads reducing `R / S` elements into a partial result
      initialised to the combiner's neutral element;
    - a generic combining the `S` partials of each output into the
      original output, in order.

    When the reduced dimension is the innermost of the first input that
    reads it (a row: the loss over the vocabulary) the split interleaves:
    thread `s` of a row reads elements `s, s + S, ...`, so that a warp reads
    consecutive addresses; otherwise (a column: a sum over tokens) thread
    `s` reads the contiguous chunk `[s * R / S, (s + 1) * R / S)` and
    consecutive threads read consecutive outputs.

    Sums are reassociated: the result differs from the CPU target's in the
    last bits, as any parallel reduction does, and is the same on every
    run.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"65536",
           "Split reductions with fewer output elements than this, to about "
           "this many threads">,
    Option<"minChunk", "min-chunk", "int64_t", /*default=*/"16",
           "The fewest reduced elements a thread of a split reduction "
           "reads">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numSplit", "split", "Reductions split">
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

def ExpandBF16 : Pass<"zshard-expand-bf16", "::mlir::ModuleOp"> {
  let summary = "Write f32 <-> bf16 conversions as integer arithmetic";
  let description = [{
    Rewrites every scalar or vector `arith.truncf` to bf16 and `arith.extf`
    from bf16 into bit operations on i32/i16 (MLIR's
    `populateExpandBFloat16Patterns`): truncation rounds to nearest even and
    makes a NaN the quiet NaN 0x7FC0, extension shifts the bits up. Run by
    the CPU lowering before arith-to-llvm.

    Without it LLVM lowers a scalar `fptrunc float to bfloat` on a CPU
    without AVX512-BF16 (an AMD EPYC of Zen 2/3, most Intel client parts)
    to a call of `__truncsfbf2`, which Debian 12's libgcc (GCC 12) does not
    have: the compiled `step.so` then fails to load ("undefined symbol:
    __truncsfbf2"). The integer form needs no helper, vectorises like any
    integer loop, and rounds the same on every x86-64 CPU (the AVX512-BF16
    instruction flushes subnormal inputs to zero; this keeps them).

    ```mlir
    %h = arith.truncf %x : f32 to bf16
    // becomes
    %i = arith.bitcast %x : f32 to i32
    ... (round-to-nearest-even bias, shift, NaN select)
    %h = arith.bitcast %r : i16 to bf16
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def UpdateInPlace : Pass<"zshard-update-in-place", "::mlir::ModuleOp"> {
  let summary = "Write parameter and optimizer-state updates into their own "
                "buffers";
  let description = [{
    Runs on a bufferized step whose results are out-parameters. Each updated
    parameter or optimizer-state tensor (`param_out`, `opt_state_out` and
    their shard forms) is then computed into a temporary that the end of the
    step copies into the out-parameter, so the runtime would hold the state
    twice (the argument and the out-parameter) and the step a third copy in
    the temporaries until they are copied.

    When the temporary is first written after the last op that may read the
    argument it updates (uses of the argument and, transitively, of values
    derived from it: views, runtime-call pointers, the handles of
    asynchronous collectives until their wait), the pass writes the update
    into the argument's buffer instead: the temporary, its copy and its
    deallocation go, and the out-parameter is marked `zshard.in_place`. The
    last read and the first write may be the same op when it is an
    elementwise linalg op that reads the argument through the permutation
    map it writes the update with (the fused AdamW update reading and
    writing the optimizer state), because each element is then read and
    written by one iteration only.

    When the module holds the step's ABI record (`zshard.abi`, written by
    `zshard-record-abi`), the pass sets `in_place = true` on those results
    there, and the manifest, written from the record, marks them
    `"in_place": true`; the runtime passes
    the argument's buffer for the out-parameter and allocates none, and the
    memory plan counts the state once. An offloaded argument
    (`zshard.placement = #zshard.placement<host>`) that cannot be updated in place gets a
    warning: its update then passes through device memory.
  }];
  let statistics = [Statistic<"numInPlace", "in-place",
                              "Updates written into their arguments">];
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

def AttentionToRuntime
    : Pass<"zshard-attention-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Turn zshard.causal_attention and its grad into runtime calls";
  let description = [{
    Runs on tensors, before bufferization, as zshard-collectives-to-runtime
    does, and makes each op one call of
    `zshard_rt_step_attention_strided_fwd` / `_bwd` (batch, heads, kv heads,
    seq, head size, scale, then for each `[batch, heads, seq, head]` operand
    and result its element pointer and batch, head and seq strides; lse's
    pointer alone). An operand that is a strided view of another tensor
    with contiguous rows, through the copies that split the heads (a
    linalg.transpose; a generic yielding its input through a permutation
    with constant shifts, or `tensor.extract` at its loop indices) and
    expand / collapse_shape, is read in place: that tensor goes through
    `bufferization.to_buffer` (read only, identity layout) and the call
    gets the view's offset and strides, so q, k and v are read from the
    projection they were split from and the copies are erased when nothing
    else reads them. Each result is a fresh `memref.alloc` (charged to
    activations) handed back by `bufferization.to_tensor`; one that a use
    transposes to `[batch, seq, heads, head]` (the heads' merge) is
    allocated in that layout and written there, the use replaced by the
    buffer (other uses read a transpose of it, which the grad's call reads
    through: forwards are lowered first). The runtime runs the tiled
    kernels of docs/attention.md on the host or the current CUDA device, so
    the CPU and CUDA pipelines share this pass and no `[T, T]` buffer exists
    in either.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PrepareLinalgForGPU
    : Pass<"zshard-prepare-linalg-for-gpu", "::mlir::func::FuncOp"> {
  let summary = "Shape a bufferized step's linalg ops so that each becomes one GPU kernel";
  let description = [{
    Runs on the bufferized step of the CUDA target, before
    `convert-linalg-to-parallel-loops`, so that every op that touches memory
    ends up inside one `scf.parallel` nest, which later becomes a kernel:

    * every `memref.copy` becomes a `linalg.copy` (a copy kernel; on the
      device the host-side `memcpy` a contiguous copy lowers to would read
      device memory from the host);
    * a `linalg.generic` whose iteration domain has a reduction dimension
      outside a parallel one is interchanged so that its parallel
      dimensions come first (otherwise the reduction would stay a host loop
      launching one kernel per iteration);
    * a linalg op without parallel dimensions (a 0-d scalar computation, a
      full reduction) is wrapped in a one-iteration `scf.parallel`, so it
      runs in a one-thread kernel instead of on the host; so is an `scf.for`
      at the top level of the function (a scatter-add of one column, whose
      one-iteration `scf.forall` canonicalization folded away).

    Before:
    ```mlir
    linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []}
        ins(%a : memref<f32>) outs(%b : memref<f32>) { ... }
    ```
    After:
    ```mlir
    scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
      linalg.generic {...} ins(%a : memref<f32>) outs(%b : memref<f32>) { ... }
      scf.reduce
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numCopies", "copies", "memref.copy ops turned into linalg.copy">,
    Statistic<"numInterchanged", "interchanged",
              "Generics interchanged to put parallel dimensions first">,
    Statistic<"numWrapped", "wrapped",
              "Ops without parallel dimensions wrapped for a one-thread kernel">
  ];
}

def GPUTileParallelLoops
    : Pass<"zshard-gpu-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Collapse each outermost scf.parallel to one dimension and tile it into blocks";
  let description = [{
    Prepares the parallel loops of a step for `gpu-map-parallel-loops`.
    Each outermost `scf.parallel` is normalised and its dimensions are
    collapsed into one (the last dimension varies fastest, so consecutive
    threads touch consecutive elements), then tiled by `block-size`
    (without min/max bounds: the inner loop has a constant trip count,
    with a bounds check in its body). The outer loop then maps to the
    blocks of a one-dimensional grid and the inner one to the threads of a
    block, so every kernel has at most `block-size` threads a block,
    whatever the rank of the op. A loop with a static trip count below
    `block-size` gets one block of exactly that many threads (a scalar op a
    one-thread kernel).

    Before:
    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c300) step (%c1, %c1) {...}
    ```
    After:
    ```mlir
    scf.parallel (%b) = (%c0) to (%c1200) step (%c256) {
      scf.parallel (%t) = (%c0) to (%c256) step (%c1) {
        scf.if %in_bounds { ... }
      }
    }
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads a block (at most 1024)">
  ];
  // Collapsing normalises the loops with affine.apply.
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numTiled", "tiled", "Outermost parallel loops tiled">
  ];
}

def CheckHostMemoryAccess
    : Pass<"zshard-check-host-memory-access", "::mlir::ModuleOp"> {
  let summary = "Fail if host code of a CUDA step would still touch memory";
  let description = [{
    On the CUDA target every buffer of a step lives in device memory, so
    the host code must only allocate and free buffers, take views and
    pointers of them, call the runtime and launch kernels. Run after kernel
    outlining, this pass reports an error naming each op outside a
    `gpu.module` that reads or writes a memref (a `memref.load`,
    `memref.store`, `memref.copy`, a linalg op left behind, ...), instead of
    letting the compiled step read device memory on the host and crash.
    Calls (the runtime's entries take device pointers) and `gpu` ops are
    allowed. The IR is unchanged.
  }];
  let statistics = [
    Statistic<"numHostAccesses", "host-accesses",
              "Host-side memory accesses found">
  ];
}

def GPUAsyncLaunches
    : Pass<"zshard-gpu-async-launches", "::mlir::func::FuncOp"> {
  let summary = "Chain a step's kernel launches on one stream, synchronized once at the end";
  let description = [{
    A synchronous `gpu.launch_func` lowers to a stream created, the launch,
    a synchronization and the stream destroyed: a host round trip per
    kernel. In a function of one block (a bufferized step), this pass
    starts one stream (`gpu.wait async`) at entry, makes every launch
    asynchronous on the token of the previous one, and waits for the last
    one before returning, so the host enqueues the whole step and
    synchronizes once.

    This relies on the runtime (which implements the mgpu* host functions)
    giving the step its compute stream from `mgpuStreamCreate` and running
    everything else the step calls -- cuBLAS products, collectives -- in
    order with it, and on device memory freed by the step being reused only
    by work ordered after it on that stream (docs/passes.md, "CUDA target").

    Before:
    ```mlir
    gpu.launch_func @k0::@k0 blocks in (...) threads in (...) args(...)
    gpu.launch_func @k1::@k1 blocks in (...) threads in (...) args(...)
    return
    ```
    After:
    ```mlir
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @k0::@k0 blocks in (...) ...
    %t2 = gpu.launch_func async [%t1] @k1::@k1 blocks in (...) ...
    gpu.wait [%t2]
    return
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let statistics = [
    Statistic<"numLaunches", "launches", "Launches made asynchronous">
  ];
}

def GPUMergeKernelModules
    : Pass<"zshard-gpu-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Put all outlined kernels of a step into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` gives every kernel a gpu.module of its own, so a
    step of a few hundred kernels would become a few hundred GPU binaries,
    each compiled separately (ptxas and fatbinary once per module: 80% of
    the compile time of a 4-layer GPT step), embedded, and loaded by a
    constructor of its own. This pass moves the kernels of every gpu.module
    holding nothing but kernels into the first one, each renamed after the
    module it came from, and points the `gpu.launch_func` ops at them, so
    the step has one binary and one module to load.

    Before:
    ```mlir
    gpu.launch_func @step_kernel::@step_kernel ...
    gpu.launch_func @step_kernel_0::@step_kernel ...
    gpu.module @step_kernel { gpu.func @step_kernel(...) kernel {...} }
    gpu.module @step_kernel_0 { gpu.func @step_kernel(...) kernel {...} }
    ```
    After:
    ```mlir
    gpu.launch_func @step_kernel::@step_kernel ...
    gpu.launch_func @step_kernel::@step_kernel_0 ...
    gpu.module @step_kernel {
      gpu.func @step_kernel(...) kernel {...}
      gpu.func @step_kernel_0(...) kernel {...}
    }
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let statistics = [
    Statistic<"numMerged", "merged", "gpu.modules merged into the first">
  ];
}

#endif // ZSHARD_CONVERSION_PASSES_TD
