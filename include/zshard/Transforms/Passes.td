//===- Passes.td - zshard transformation passes ------------*- tablegen -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TRANSFORMS_PASSES_TD
#define ZSHARD_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyContract : Pass<"zshard-verify-contract", "::mlir::ModuleOp"> {
  let summary = "Check that a module holds one well-formed training step";
  let description = [{
    Enforces the training-step contract of `docs/contract.md`: exactly one
    `func.func` marked `zshard.step`; static tensors only; roles, names and
    init specs on every argument and result; optimizer state tied to an
    existing parameter of the same shape; one loss; one `param_out` per
    parameter and one `opt_state_out` per optimizer state; ops only from
    func, linalg, tensor, arith, math and scf; phases (derived by
    `PhaseAnalysis`) that agree with any explicit `zshard.phase` and never
    flow backwards (the dialect checks the module paths, `zshard.path`).
    Every diagnostic names the offending argument, result or op.

    The pass changes nothing; it fails on the first module that breaks a
    rule, after reporting every broken rule it finds.
  }];
  let statistics = [
    Statistic<"numParams", "params", "Parameters in the step">,
    Statistic<"numParamElements", "param-elements",
              "Parameter elements in the step">,
    Statistic<"numOps", "ops", "Top-level ops in the step">
  ];
}

def PathsFromLocations
    : Pass<"zshard-paths-from-locations", "::mlir::ModuleOp"> {
  let summary = "Read module paths written as name locations into zshard.path";
  let description = [{
    Steps written before module paths were attributes carried them as name
    locations (`loc("h.0.attn")`), which MLIR drops when it prints without
    debug info. This pass gives every top-level op of the step that has no
    `zshard.path` the path its name location spells, so that the passes
    reading paths (`zshard-remat`) see it; a root path `loc("")` gives none.
    Ops that already have a path, constants and the terminator are left
    alone, and the location stays as debug information. A name that is not
    a dotted path (identifiers and decimal indices joined by `.`) is an
    error on that op.

    `zshard-compile` and `zshard-opt --zshard-pipeline` run it first, so
    both kinds of step compile.
  }];
  let statistics = [
    Statistic<"numPaths", "paths", "Module paths read from locations">
  ];
}

def DropModulePaths : Pass<"zshard-drop-module-paths", "::mlir::ModuleOp"> {
  let summary = "Drop the zshard.path attributes once nothing reads them";
  let description = [{
    Module paths tell units, checkpointing and the hints which module an op
    belongs to; the bufferized step needs none of that. The bufferization
    pipeline (`--zshard-bufferize-step`, the plan phase) drops them first,
    so that CSE merges identical ops of different modules (the zero-fills
    of same-shaped products, say), as it did when paths were locations.
  }];
  let statistics = [
    Statistic<"numDropped", "dropped", "Module paths dropped">
  ];
}

def AnnotatePhases : Pass<"zshard-annotate-phases", "::mlir::ModuleOp"> {
  let summary = "Write each op's derived phase as a zshard.phase attribute";
  let description = [{
    Runs `PhaseAnalysis` on the training step and writes its result on every
    top-level op as `zshard.phase = #zshard.phase<forward>` (or `backward`,
    `optimizer`).
    Useful to read a step, and to test the analysis.

    Before:
    ```mlir
    %y = linalg.matmul ins(%x, %w : ...) outs(%init : ...) -> tensor<8x2xf32>
    ```
    After:
    ```mlir
    %y = linalg.matmul {zshard.phase = #zshard.phase<forward>} ins(%x, %w : ...) ...
    ```
  }];
}

def FormUnits : Pass<"zshard-form-units", "::mlir::ModuleOp"> {
  let summary = "Group parameters into units by a wrap policy";
  let description = [{
    Decides which parameters are flattened, gathered and reduced together,
    like FSDP's auto-wrap policies, and declares the result: a `shard.grid`
    `@world` and one `zshard.unit` per group (members in argument order,
    offsets and padding from the shared layout helper); each parameter
    argument gets `zshard.unit = @name`.

    Policies:
    * `transformer`: one unit per module path matching `pattern` (a
      comma-separated list of paths where `<i>` stands for an index, default
      `h.<i>`), like `transformer_auto_wrap_policy`; or, with
      `layer-classes=LlamaDecoderLayer`, one unit per module of those
      classes as the step's `zshard.module_classes` records them (FSDP's
      `transformer_layer_cls`), a parameter inside nested ones going to the
      innermost;
    * `size`: greedy in argument order, closing a unit once it holds at
      least `min-params` elements, like `size_based_auto_wrap_policy`;
    * `explicit`: `units="emb=wte,wpe;head=lm_head.weight"`.
    Parameters no unit claims go to the unit `@root`. A parameter is one
    argument, so tied weights always land in one unit; an explicit policy
    naming a parameter twice, or naming one that does not exist, is an error.

    The grid has `ranks` ranks; hybrid strategies split them into
    `replicas` groups (`shard.grid @world(shape = replicas x ranks/replicas)`,
    shard axis 1, replicate axis 0).

    Before:
    ```mlir
    func.func @train_step(%w: tensor<4x4xf32> {zshard.name = "h.0.w", ...}
    ```
    After (`ranks=4`):
    ```mlir
    shard.grid @world(shape = 4)
    zshard.unit @h.0 on @world[0] full_shard padded(16) param(f32) reduce(f32) [
      "h.0.w" : 4x4 at 0
    ]
    func.func @train_step(%w: tensor<4x4xf32> {zshard.name = "h.0.w", zshard.unit = @h.0, ...}
    ```
  }];
  let options = [
    Option<"policy", "policy", "::mlir::zshard::WrapPolicy",
           "::mlir::zshard::WrapPolicy::Transformer", "Wrap policy",
           [{::llvm::cl::values(
             clEnumValN(::mlir::zshard::WrapPolicy::Transformer, "transformer",
                        "one unit per module matching pattern (or of a layer class)"),
             clEnumValN(::mlir::zshard::WrapPolicy::Size, "size",
                        "units closed at min-params elements"),
             clEnumValN(::mlir::zshard::WrapPolicy::Explicit, "explicit",
                        "the units listed by units="))}]>,
    Option<"pattern", "pattern", "std::string", "\"h.<i>\"",
           "transformer: module paths that form units; <i> is an index">,
    ListOption<"layerClasses", "layer-classes", "std::string",
           "transformer: module classes (from the step's "
           "zshard.module_classes) whose modules form units; replaces "
           "pattern">,
    Option<"minParams", "min-params", "int64_t", "1000000",
           "size: elements a unit holds before it is closed">,
    Option<"explicitUnits", "units", "std::string", "\"\"",
           "explicit: name=param,param;name=param">,
    Option<"ranks", "ranks", "int64_t", "1", "Ranks in the grid">,
    Option<"replicas", "replicas", "int64_t", "1",
           "Hybrid strategies: replica groups the ranks are split into">,
    Option<"strategy", "strategy", "::mlir::zshard::Strategy",
           "::mlir::zshard::Strategy::FullShard", "Sharding strategy",
           [{::llvm::cl::values(
             clEnumValN(::mlir::zshard::Strategy::NoShard, "no_shard",
                        "DDP: everything replicated"),
             clEnumValN(::mlir::zshard::Strategy::Zero1, "zero1",
                        "optimizer state sharded"),
             clEnumValN(::mlir::zshard::Strategy::ShardGradOp, "shard_grad_op",
                        "ZeRO-2: gradients and optimizer state sharded"),
             clEnumValN(::mlir::zshard::Strategy::FullShard, "full_shard",
                        "ZeRO-3: parameters too"),
             clEnumValN(::mlir::zshard::Strategy::HybridShard, "hybrid_shard",
                        "full_shard in a group, replicated across groups"),
             clEnumValN(::mlir::zshard::Strategy::HybridShardZero2,
                        "hybrid_shard_zero2",
                        "shard_grad_op in a group, replicated across groups"))}]>,
    Option<"reduceType", "reduce-type", "::mlir::zshard::UnitFloatType",
           "::mlir::zshard::UnitFloatType::F32",
           "Element type gradients are reduced in",
           "::mlir::zshard::getReduceTypeValues()">,
    Option<"bufferType", "buffer-type", "::mlir::zshard::UnitFloatType",
           "::mlir::zshard::UnitFloatType::Own",
           "Element type buffers are computed with (FSDP's buffer_dtype)",
           "::mlir::zshard::getBufferTypeValues()">,
    ListOption<"noReshard", "no-reshard", "std::string",
           "Units (by name) that keep their gathered "
           "parameters from forward to backward (FSDP's "
           "reshard_after_forward=False): full_shard becomes shard_grad_op "
           "and hybrid_shard hybrid_shard_zero2 for them">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::zshard::ZShardDialect"];
  let statistics = [
    Statistic<"numUnits", "units", "Units formed">
  ];
}

def Accumulate : Pass<"zshard-accumulate", "::mlir::ModuleOp"> {
  let summary = "Gradient accumulation: forward and backward over K microbatches";
  let description = [{
    Turns a training step written for a batch of B into one that takes K
    microbatches of B, as K*B rows of every batch argument (microbatch i is
    rows [i*B, (i+1)*B) of the first dimension), runs its forward and
    backward once per microbatch, and feeds the optimizer the mean of the K
    gradients (and returns the mean of the K losses): for a loss that is a
    mean over the batch, one step of K microbatches of B is one step of a
    batch of K*B. The optimizer, and so every collective sharding adds,
    runs once per step (FSDP's `no_sync`).

    The ops the loss and the gradients (the `grad` of each `zshard.adamw`,
    OptimizerAnalysis) depend on are copied K times, unrolled in block
    order, each copy reading its slice of the batch and tagged
    `zshard.microbatch = i`; the loss and each gradient are added up right
    after each copy makes them (`linalg.generic`s written into the running
    sum, so one gradient buffer is live between microbatches) and scaled by
    1/K after the last. The step gets `zshard.microbatches = K`.

    Before (B = 2):
    ```mlir
    func.func @train_step(..., %x: tensor<2x4xf32> {zshard.role = #zshard.role<batch>}, ...)
      %h = linalg.matmul ins(%x, %w ...)    // forward, backward ...
      %p, %m, %v = zshard.adamw textbook %w, %gw, ...
    ```
    After (`microbatches=2`):
    ```mlir
    func.func @train_step(..., %x: tensor<4x4xf32> {zshard.role = #zshard.role<batch>}, ...)
        attributes {zshard.microbatches = 2 : i64, zshard.step}
      %x0 = tensor.extract_slice %x[0, 0] [2, 4] [1, 1] {zshard.microbatch = 0 : i64}
      ...                                   // forward, backward of %x0
      %x1 = tensor.extract_slice %x[2, 0] [2, 4] [1, 1] {zshard.microbatch = 1 : i64}
      ...                                   // forward, backward of %x1
      %gw = linalg.generic ... ins(%gw1) outs(%gw0)   // (gw0 + gw1) * 0.5
      %p, %m, %v = zshard.adamw textbook %w, %gw, ...
    ```

    Runs on the unsharded step, after `--zshard-remat` (which checkpoints
    one microbatch's blocks and refuses an accumulating step) and before
    `--zshard-form-units`; `--zshard-shard` then reduces each unit's
    accumulated gradients once and places its gathers per microbatch or
    once for all (`microbatch-gathers`). `microbatches=1` leaves the step
    as it is. Errors: K < 1, a sharded or already accumulating step, a
    step without batch arguments or with a scalar one, and a batch argument
    or a forward/backward value read outside the loss and the gradients.
  }];
  let options = [
    Option<"microbatches", "microbatches", "int64_t", "1",
           "Microbatches K per step (the step takes K times its batch)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numCloned", "cloned",
              "Forward and backward ops copied for microbatches 1..K-1">,
    Statistic<"numAccumulated", "accumulated",
              "Gradients and losses added up over the microbatches">
  ];
}

def Shard : Pass<"zshard-shard", "::mlir::ModuleOp"> {
  let summary = "Shard parameters, gradients and optimizer state by unit";
  let description = [{
    Rewrites the training step for the units `--zshard-form-units` declared,
    the way FSDP / ZeRO shard them. Per unit, with its strategy:

    * `full_shard` (ZeRO-3): the unit's members become one flat shard
      argument (`zshard.role = #zshard.role<param_shard>`); an `all_gather` rebuilds the
      full buffer before the first forward use of any member and a `release`
      follows the last forward use; backward gathers it again and releases it
      after its last use (reshard after forward);
    * `shard_grad_op` (ZeRO-2): as full_shard, but the forward gather stays
      live through backward (no reshard);
    * both: the members' gradients are packed into the padded flat buffer
      and `reduce_scatter avg`-ed after the last of them; the
      `zshard.adamw` of each member (found by `OptimizerAnalysis`) is
      rebuilt on the part of that member this rank holds, an offset and
      length computed from the rank's grid coordinate, so one SPMD program
      serves every rank; optimizer state becomes flat shards
      (`"opt_state_shard"` with its `zshard.slot`), and the results are the
      updated shards;
    * `zero1`: parameters stay whole (no gathers in forward and backward);
      gradients are reduce-scattered and optimizer state sharded as above,
      the optimizer updates this rank's part of the parameters, and one
      `all_gather` returns the whole updated parameters to every rank;
    * `hybrid_shard` / `hybrid_shard_zero2`: full_shard / shard_grad_op
      inside the shard group, and the gradient shard is then `all_reduce
      avg`-ed over the replicate axes;
    * `no_shard` (DDP): parameters and state stay whole; the members'
      gradients are packed into one flat buffer, `all_reduce avg`-ed, and
      unpacked for the unchanged optimizer.

    One collective per unit, never one per parameter.

    Besides its update, a gradient may be read only by whole sums
    (`sum_i f(g_i)` into a scalar, such as the sums of squares of a global
    gradient norm). For the sharded strategies each such sum is rebuilt over
    the part of the gradient this rank holds in the reduced shard, and the
    partial sums of all members of all units travel in one `all_reduce sum`
    over the shard axes; the ops depending on the totals (the clipping
    coefficient, the updates) move after it. For `no_shard` the sums read
    the all-reduced gradient. Any other reader of a gradient is an error
    naming the parameter, since it would see this rank's unreduced gradient.

    A step that accumulates K microbatches (`--zshard-accumulate`) still
    reduces each unit's accumulated gradients once. Its gathers follow
    `microbatch-gathers`: `regather` (the default, FSDP's `no_sync`) gathers
    in every microbatch as a whole step does (full_shard and hybrid_shard
    for forward and again for backward, shard_grad_op once kept through the
    microbatch's backward), by the ops' `zshard.microbatch`; `keep` gathers
    once and keeps the parameters until the last backward use of the last
    microbatch (K times fewer gathers, every unit whole through the step).

    Each `zshard.batch_mean` (a mean over the slices of the global batch,
    such as the count of labelled positions a loss divides by) becomes an
    `all_reduce avg` over every axis of the units' grid, shard and
    replicate axes alike, since each rank holds one slice of the batch.

    Buffers stay whole on every rank, in their own type. A unit with
    `buffer(T)` (FSDP's `buffer_dtype`) has each buffer it owns
    (`BufferOwners`: the unit of the innermost module containing the
    buffer) rounded to T once, before the buffer's first use, and every use
    reads the rounded value, back in the buffer's own type (f32 -> bf16 ->
    f32), so the step's compute types do not change; a T that holds every
    value of the buffer's type (f32 for a bf16 buffer) changes nothing:
    ```mlir
    %r = arith.truncf %mix : tensor<12x12xf32> to tensor<12x12xbf16>
    %m = arith.extf %r : tensor<12x12xbf16> to tensor<12x12xf32>
    ```
  }];
  let options = [
    Option<"microbatchGathers", "microbatch-gathers",
           "::mlir::zshard::MicrobatchGathers",
           "::mlir::zshard::MicrobatchGathers::Regather",
           "Accumulating steps: gather per microbatch or once for all",
           [{::llvm::cl::values(
             clEnumValN(::mlir::zshard::MicrobatchGathers::Regather,
                        "regather", "gather in every microbatch"),
             clEnumValN(::mlir::zshard::MicrobatchGathers::Keep, "keep",
                        "gather once, keep through all microbatches"))}]>
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::zshard::ZShardDialect"];
  let statistics = [
    Statistic<"numGathers", "gathers", "all_gather ops inserted">,
    Statistic<"numReductions", "reductions",
              "reduce_scatter and all_reduce ops inserted">,
    Statistic<"numRoundedBuffers", "rounded-buffers",
              "buffers rounded to their unit's buffer type">
  ];
}

def LowerBatchMeans : Pass<"zshard-lower-batch-means", "::mlir::ModuleOp"> {
  let summary = "Replace each zshard.batch_mean left by sharding by its input";
  let description = [{
    A `zshard.batch_mean` that reaches the lowering belongs to a step that
    runs on one rank (zshard-shard turned every other one into an
    `all_reduce avg`, and zshard-accumulate made it a mean over the
    microbatches): the global batch is that one slice, so the mean is the
    input itself. The zshard-lower-to-llvm and zshard-lower-to-cuda
    pipelines run it first, beside zshard-lower-adamw.
  }];
  let statistics = [
    Statistic<"numLowered", "means", "zshard.batch_mean ops replaced">
  ];
}

def LowerAdamW : Pass<"zshard-lower-adamw", "::mlir::ModuleOp"> {
  let summary = "Lower zshard.adamw to fused elementwise linalg.generic ops";
  let description = [{
    Replaces every `zshard.adamw` by the linalg ops that compute it, the one
    place the AdamW arithmetic is written: a 0-d `linalg.generic` of the
    bias corrections from `step` (`torch` order: `lr / bc1` and
    `sqrt(bc2)`), then one all-parallel `linalg.generic` over the
    parameter's elements that reads the parameter (or its master copy), the
    gradient, the two moments and the scalars and yields the new parameter
    and moments (and, with a master, first the new master and last the new
    parameter rounded to its element type). Floating-point operations are
    emitted in the op's `order`, so that the lowered update is bit-identical
    to the frontend's reference; see the op's documentation.

    The zshard-lower-to-llvm and zshard-lower-to-cuda pipelines run it first,
    after sharding and offloading decided where each update runs and before
    bufferization.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numLowered", "updates", "zshard.adamw ops lowered">
  ];
}

def Remat : Pass<"zshard-remat", "::mlir::ModuleOp"> {
  let summary = "Activation checkpointing: recompute block forwards in backward";
  let description = [{
    Activation checkpointing by rematerialisation. A block is the set of
    forward ops whose module path starts with a match of `pattern` (for
    example every `h.<i>`). For a checkpointed block, the forward values
    that backward reads (its saved activations) are recomputed right before
    their first backward use from what the block reads from outside (its
    input activation, parameters, constants): the forward ops on the way
    are cloned there, and the backward ops read the clones. The values the
    forward kept for backward are then dead at the end of forward.

    `policy`:
    * `none`: nothing;
    * `all`: every block;
    * `every=K`: blocks 0, K, 2K, ... (in forward order);
    * `selective`: every block, but matrix-product outputs (named matmuls
      and contractions) stay saved; only cheap ops are recomputed;
    * `budget=BYTES` (a byte count or size such as `64MiB`): the fewest
      recomputed FLOPs whose saved activations (bytes that live across the
      forward/backward boundary in the checkpointed form) fit in BYTES:
      blocks are checkpointed in order of bytes freed per FLOP recomputed
      until the rest fits; an error gives the shortfall when even
      checkpointing every block does not fit.
    `blocks=b1,b2` checkpoints exactly the named blocks (an error names a
    block that does not exist).

    Clones carry `zshard.remat` (the block), so CSE does not merge them
    back into the forward; they compute exactly what the forward computed,
    so losses are unchanged. Runs on the unsharded step, before
    `--zshard-shard` (the backward gather then covers the parameters the
    clones read).

    Backward ops without memory effects that sit inside the forward (the
    exporter writes LayerNorm's statistics reshaped for its backward right
    where torch computed them) first move down to their first user, so
    that the backward starts after the forward ends; a block whose forward
    values backward still reads before the forward ends is not
    checkpointed (a remark says so).
  }];
  let options = [
    Option<"policy", "policy", "::mlir::zshard::RematPolicy",
           "::mlir::zshard::RematPolicy::all()",
           "none, all, every=K, selective or budget=BYTES (a byte size: "
           "1048576, 64MiB)">,
    Option<"pattern", "pattern", "std::string", "\"h.<i>\"",
           "Module paths that form blocks; <i> is an index">,
    ListOption<"blocks", "blocks", "std::string",
               "Checkpoint exactly these blocks (comma-separated)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numBlocks", "blocks", "Blocks checkpointed">,
    Statistic<"numCloned", "cloned", "Forward ops cloned into backward">,
    Statistic<"numSunk", "sunk",
              "Backward ops moved out of the forward to their first user">
  ];
}

def Offload : Pass<"zshard-offload", "::mlir::ModuleOp"> {
  let summary = "Keep optimizer state in host memory (ZeRO-Offload)";
  let description = [{
    Marks every optimizer-state argument of the step (`opt_state` and
    `opt_state_shard`) `zshard.placement = #zshard.placement<host>`: the runtime keeps it in
    its host pool (pinned host memory on CUDA, read and written by the
    update kernels across the host link; a separately accounted pool on the
    CPU), and the memory plan charges it to `host_offload`, outside the
    device peak. The AdamW update must then write its new state into the
    argument's own buffer (zshard-update-in-place, part of the lowering), or
    the update would pass through device memory; the lowering warns when it
    cannot. The cost model charges reading and writing the offloaded state
    over the device's host link to every step.

    Runs before or after zshard-shard: the shards of a unit's state stay in
    host memory when its members' state was. Choosing it is part of
    `zshard-compile --auto`.
  }];
  let statistics = [Statistic<"numOffloaded", "offloaded",
                              "Optimizer-state arguments placed in host "
                              "memory">];
}

def CostModelPass : Pass<"zshard-cost-model", "::mlir::ModuleOp"> {
  let summary = "Predict the step time of a sharded, scheduled step";
  let description = [{
    Runs `CostModel` on the step on tensors (after `--zshard-shard` and, if
    wanted, `--zshard-async --zshard-prefetch`) and emits a remark whose
    text after `zshard-cost-model: ` is one JSON object: the predicted step
    time, the compute and communication time, the communication left
    exposed by the schedule, FLOPs, collectives and offload time, and the
    device and link presets. Compute ops cost their roofline time on the
    device, collectives their ring alpha-beta time on the link (see
    `include/zshard/Analysis/CostModel.h`). `device` and
    `link` pick presets (devices a100, h100, h200, cpu; links nvlink, ib,
    eth100, eth10); `peak-flops`, `mem-bandwidth`, `link-bandwidth` and
    `link-latency` override their numbers (peak-flops sets both f32 and
    bf16). `report=FILE` writes the figures as JSON. The IR is unchanged.
  }];
  let options = [
    Option<"device", "device", "::mlir::zshard::DevicePreset",
           "::mlir::zshard::DevicePreset::H100", "Device preset",
           "::mlir::zshard::getDevicePresetValues()">,
    Option<"link", "link", "::mlir::zshard::LinkPreset",
           "::mlir::zshard::LinkPreset::IB", "Link preset",
           "::mlir::zshard::getLinkPresetValues()">,
    Option<"peakFlops", "peak-flops", "double", "0",
           "Override: FLOP/s (f32 and bf16)">,
    Option<"memBandwidth", "mem-bandwidth", "double", "0",
           "Override: memory bytes/s">,
    Option<"linkBandwidth", "link-bandwidth", "double", "0",
           "Override: link bytes/s per rank">,
    Option<"linkLatency", "link-latency", "double", "-1",
           "Override: link latency in seconds">,
    Option<"report", "report", "std::string", "\"\"",
           "Write the figures as JSON to this file">
  ];
}

def Async : Pass<"zshard-async", "::mlir::ModuleOp"> {
  let summary = "Turn every collective into a start and a wait";
  let description = [{
    Replaces each synchronous `all_gather`, `reduce_scatter` and
    `all_reduce` by its `*_start` op and a `zshard.wait` right after it,
    keeping its unit, grid and reduction; releases then name the wait's
    result. On its own this changes nothing at run time (the canonicalizer
    folds an adjacent pair back); `--zshard-prefetch` moves the two apart.
  }];
  let dependentDialects = ["::mlir::zshard::ZShardDialect"];
  let statistics = [
    Statistic<"numSplit", "split", "Collectives split into start and wait">
  ];
}

def Prefetch : Pass<"zshard-prefetch", "::mlir::ModuleOp"> {
  let summary = "Schedule async collectives: prefetch gathers, defer waits";
  let description = [{
    Places the start/wait pairs of `--zshard-async` so that communication
    overlaps compute, as FSDP's prefetching does:

    1. every `zshard.wait` moves to just before the first use of its result;
    2. all-gathers are ordered by their waits, separately for the forward
       and the backward phase. In forward, the gather of the j-th unit
       starts right after the wait of unit j - `forward-depth` (so unit
       j + d is fetched while unit j computes); the first `forward-depth`
       start together before the first wait. In backward,
       `backward=pre` (FSDP's BACKWARD_PRE) starts the next unit's gather
       right after the current unit's wait, `post` (BACKWARD_POST) after the
       current unit's release (its gradient computation done), `none` right
       before its own wait; with `pre` and `post` the first backward gather
       starts as early as it may, so it overlaps the end of forward and the
       loss. A gather never starts before the release of the previous gather
       of the same unit;
    3. `max-inflight=N` (FSDP's `limit_all_gathers`, DeepSpeed's
       `max_live_parameters`, counted in units) delays a start until fewer
       than N gathered units are live (started and not yet released, or not
       yet past their last use when they have no release); 0 is no limit;
    4. reduce-scatters and all-reduces start where they were (after the
       gradient they reduce is complete) and are waited for at their first
       use or, if that is later, right before the next one starts: one is
       in flight at a time, overlapping the backward compute between them,
       and their inputs (whole unit gradients) do not pile up;
    5. `bucket-bytes=B` merges forward gathers that start at the same point
       and each move fewer than B bytes into one collective over their
       concatenated shards (fewer, larger messages), sliced back into the
       units' buffers after the wait.

    Collectives that are not async are left alone. Every rank runs the same
    schedule, so collectives stay matched across ranks.
  }];
  let options = [
    Option<"forwardDepth", "forward-depth", "int64_t", "1",
           "Units gathered ahead in forward (0: no forward prefetch)">,
    Option<"backward", "backward", "::mlir::zshard::BackwardPrefetch",
           "::mlir::zshard::BackwardPrefetch::Pre",
           "Backward prefetch: pre, post or none (FSDP's BackwardPrefetch)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::zshard::BackwardPrefetch::Pre, "pre",
                        "BACKWARD_PRE: when the previous unit's gather is waited for"),
             clEnumValN(::mlir::zshard::BackwardPrefetch::Post, "post",
                        "BACKWARD_POST: when the previous unit's backward is done"),
             clEnumValN(::mlir::zshard::BackwardPrefetch::None, "none",
                        "no backward prefetch"))}]>,
    Option<"maxInflight", "max-inflight", "int64_t", "0",
           "Most gathered units live at once (0: no limit)">,
    Option<"bucketBytes", "bucket-bytes", "int64_t", "0",
           "Merge forward gathers smaller than this many bytes that start "
           "together into one collective (0: no bucketing)">
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::zshard::ZShardDialect"];
  let statistics = [
    Statistic<"numHoisted", "hoisted", "Gather starts moved earlier">,
    Statistic<"numDelayed", "delayed",
              "Gather starts delayed by the in-flight limit">,
    Statistic<"numBuckets", "buckets", "Merged gathers (buckets)">
  ];
}

def FuseElementwise : Pass<"zshard-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse elementwise producers into linalg.generic consumers";
  let description = [{
    Upstream elementwise fusion with one rule added: the consumer must
    already be a `linalg.generic`. Upstream fuses into named ops too and
    turns a `linalg.batch_matmul` fed by a transpose into a generic
    contraction, which then becomes scalar loops instead of a BLAS call;
    here matrix products stay named so `--zshard-matmul-to-runtime` can take
    them. And a producer that narrows its elements (an f32 -> bf16 cast of a
    same-shaped tensor) is not fused: its consumer may run much later (a
    bf16 weight gradient is read by the optimizer), and fusing would keep
    the wide tensor live until then instead of the narrow one.

    A producer with several uses fuses into each of them (computed again
    per consumer, the tensor it wrote gone) where that moves fewer bytes and
    does not raise the peak memory: all its loops parallel, at most four
    arith ops an element, at most one of its inputs read element for
    element (the others broadcast: a row's mean, a feature's weight), every
    use an input of a `linalg.generic` of the same block that reads each
    element once, and the buffers of its inputs that would then live until
    the last consumer, and would not otherwise, no larger than its result.
    A second round, once the first has reached its fixpoint, allows the
    inputs read through a broadcast map up to 1/64 of the result on top: a
    LayerNorm backward's `x - mean`, read by the weight's and the input's
    gradients, keeps x (its result's size) and the row means (1/256 of it
    at d256) alive until the last of them. It runs second so that the
    one-hot sum below has folded its chain first: recomputing the
    cross-entropy backward's scaled one-hot in its two consumers would
    leave the one-hot tensor written (+4 MiB planned at d256). The d256 GPT
    step runs 3.3 ms faster with it, its losses bit for bit the same and
    its planned peak unchanged. A residual add (two inputs read element for
    element) or a bias from a gathered unit buffer that would stay alive for
    it is not recomputed.

    The second round also makes such producers recomputable
    (lib/Transforms/Recomputable.cpp): a `math` op of inputs read through
    one broadcast map (a log-softmax's `log(sum)`) moves into an op of its
    own over those inputs' elements, read back through the same map, and an
    element read (`tensor.extract`) of an all-parallel generic whose body
    is at most four arith ops (a cross-entropy's pick of the target's log
    probability) is computed from its inputs' elements at that point. The
    log-softmax is then read by the backward alone and fuses into it: no
    [tokens, vocab] tensor is written for it (the d256 GPT step 1.25 ms
    faster in paired runs, GPT-2 small about 15 ms), bit for bit the same
    values.

    And a sum over one dimension of a one-hot tensor is computed from its
    one element that can be nonzero: a cross-entropy backward's gradient of
    the picked log probabilities (`select(class == target, -1, 0)` times the
    row's weight), summed by the log-softmax backward. The producer's body
    must yield `f(select(index == c, a, 0))` along the summed dimension, `c`
    and `a` independent of it, `0` a constant zero and `f` multiplications
    by values independent of it (and negations), and the sum must start
    from a fill of +0 over two or more elements: off the target every
    element is then +-0 or NaN, and the folded op computes the reduction's
    result bit for bit (`+0 + f(a)` for a target in range, `+0 + f(0)`
    otherwise, NaN when `f(0)` is). The one-hot tensor is then read once and
    fused into that read: the d256 GPT step writes no [tokens, vocab]
    tensor for it, and its planned peak drops by that tensor (117.69 to
    113.70 MiB).

    And a plain sum over the rows of an elementwise op's result (a Linear's
    bias gradient: the sum over the tokens of the gradient of its output,
    which its two products read as well) is computed by that op, as a second
    result, when the op's last dimension is the sum's columns (through
    reshapes of its result) and its loops are all parallel: the fused op
    runs the op's loops with all but the last as reductions, writes the
    op's result as before and adds each element to its column's sum. Every
    column is summed in the same order from the same start, so the result is
    the reduction's bit for bit; the sum no longer reads the tensor again
    (a GELU backward's gradient in the GPT steps). `column-sums=false` (the
    CUDA pipelines') leaves the sums as they are.
  }];
  let options = [
    Option<"columnSums", "column-sums", "bool", /*default=*/"true",
           "Compute column sums of elementwise results in their producer">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def RecordABI : Pass<"zshard-record-abi", "::mlir::ModuleOp"> {
  let summary = "Record the step's ABI on the module, for the manifest";
  let description = [{
    Reads the step contract (`StepContract`), the units (`zshard.unit`) and
    the device grid (`shard.grid`) and writes what the artifact's manifest
    says about them as one typed attribute on the module,
    `zshard.abi = #zshard.step_abi<...>`: the arguments with their roles,
    names, types, init specs, units, slots, placement and recorded values;
    the results; each unit's layout with its members' init specs and its
    optimizer-state slots; the grid and the number of ranks; the module's
    string attributes; and the target and chip given as options.

    It runs first in the `plan` phase, while the contract and the units are
    still in the IR (lowering erases them); the passes that change an ABI
    fact afterwards keep the record current (`zshard-update-in-place` marks
    the results it updates in place), and the manifest is written from the
    lowered module's record alone (lib/Target/Manifest.cpp). Running it
    again replaces the record.

    Before:
    ```mlir
    func.func @step(%w: tensor<8xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.w",
                                       zshard.init = #zshard.init<zeros>}, ...)
        -> (tensor<f32> {zshard.role = #zshard.role<loss>}, ...) attributes {zshard.step}
    ```
    After:
    ```mlir
    module attributes {zshard.abi = #zshard.step_abi<step = "step",
        arguments = [#zshard.abi_argument<role = param, name = "fc.w",
                     type = tensor<8xf32>, init = "zeros">, ...],
        results = [#zshard.abi_result<role = loss, type = tensor<f32>>, ...],
        units = [], ranks = 1>} {...}
    ```
  }];
  let options = [
    Option<"target", "target", "::mlir::zshard::StepTarget",
           /*default=*/"::mlir::zshard::StepTarget::CPU",
           "The device the step is compiled for",
           [{::llvm::cl::values(
             clEnumValN(::mlir::zshard::StepTarget::CPU, "cpu", "the host CPU"),
             clEnumValN(::mlir::zshard::StepTarget::CUDA, "cuda",
                        "an NVIDIA GPU"))}]>,
    Option<"chip", "chip", "std::string", /*default=*/"",
           "A CUDA step's SM architecture (e.g. sm_90)">
  ];
}

def ExtractEval : Pass<"zshard-extract-eval", "::mlir::ModuleOp"> {
  let summary = "Rewrite a training step into its forward-only eval step";
  let description = [{
    Turns the step (sharded or not) into the function that only computes
    its loss, for `zshard-compile --eval`: the step returns the loss alone
    and is marked `zshard.eval`, and every top-level op the loss does not
    depend on is erased. That removes the backward, the optimizer, the
    gradient `reduce_scatter`s and `all_reduce`s and zero1's gathers of the
    updated parameters (collectives have side effects, so generic DCE keeps
    them; this pass decides by data flow alone). What the loss reads stays,
    as the step had it: the forward's `all_gather`s of full_shard units
    with their async starts and waits, and the releases of those gathers,
    each moved up to right after the last remaining use of its buffer or of
    a slice or reshape of it (a
    shard_grad_op gather, kept for the backward in training, is freed when
    the forward is done with it).

    The arguments stay as they are, used or not, so that the runtime calls
    the eval entry with the training step's argument buffers followed by
    one buffer for the loss. A step ABI record on the module (`zshard.abi`,
    from `zshard-record-abi`) is kept current: its results become the loss
    alone.

    Before:
    ```mlir
    func.func @step(%w: tensor<8xf32> {zshard.role = #zshard.role<param_shard>, ...}, ...)
        -> (tensor<f32> {zshard.role = #zshard.role<loss>}, tensor<8xf32> {...}) {
      %t = zshard.all_gather_start %w on @world[0] unit @fc.0 ...
      %full = zshard.wait %t ...
      ... forward, loss ...
      zshard.release %full ...
      ... backward ...
      %g = zshard.reduce_scatter avg %grad on @world[0] unit @fc.0 ...
      %new = zshard.adamw ...
      return %loss, %new, ...
    }
    ```
    After:
    ```mlir
    func.func @step(%w: tensor<8xf32> {...}, ...)
        -> (tensor<f32> {zshard.role = #zshard.role<loss>}) attributes {zshard.eval, ...} {
      %t = zshard.all_gather_start %w on @world[0] unit @fc.0 ...
      %full = zshard.wait %t ...
      ... forward ...
      zshard.release %full ...
      ... loss ...
      return %loss
    }
    ```
    A step without a loss result has nothing to evaluate and is an error;
    a step already marked `zshard.eval` is left as it is.
  }];
  let statistics = [
    Statistic<"numErased", "erased", "Top-level ops erased">,
    Statistic<"numCollectivesErased", "collectives-erased",
              "Collectives (and waits) erased">,
    Statistic<"numCollectivesKept", "collectives-kept",
              "Collectives (and waits) the loss needs">
  ];
}

#endif // ZSHARD_TRANSFORMS_PASSES_TD
