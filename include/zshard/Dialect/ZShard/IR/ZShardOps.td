//===- ZShardOps.td - zshard operations --------------------*- tablegen -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDOPS_TD
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDOPS_TD

include "zshard/Dialect/ZShard/IR/ZShardDialect.td"
include "zshard/Dialect/ZShard/IR/ZShardAttrs.td"
include "zshard/Dialect/ZShard/IR/ZShardTypes.td"
include "zshard/Dialect/ZShard/IR/ZShardInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// Communication is modelled as a side effect on one resource, so collectives
/// are neither CSE'd nor reordered across each other by generic passes.
def ZShard_CommResource
    : Resource<"::mlir::zshard::CommunicationResource">;

defvar ZShard_CommEffects =
    MemoryEffects<[MemRead<ZShard_CommResource>, MemWrite<ZShard_CommResource>]>;

def ZShard_Tensor : RankedTensorOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Units
//===----------------------------------------------------------------------===//

def ZShard_UnitOp : ZShard_Op<"unit", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "One flat parameter group (FSDP FlatParameter)";
  let description = [{
    Declares a unit: the parameters that are flattened into one buffer and
    gathered, reduced and updated together. Each member gives its stable
    dotted name, its shape, and its element offset in the flat buffer. The
    flat buffer is padded to `padded`, which must be the members' extent
    rounded up to a multiple of the shard group size (the product of the
    sizes of `shard_axes` in the grid), so every rank holds an equal shard of
    `padded / group` elements.

    The strategy is one of `no_shard` (DDP: parameters, gradients and
    optimizer state replicated, gradients all-reduced), `zero1` (optimizer
    state sharded), `shard_grad_op` (ZeRO-2: gradients and optimizer state
    sharded), `full_shard` (ZeRO-3: parameters too), `hybrid_shard` and
    `hybrid_shard_zero2` (shard inside a group, replicate across groups).

    `param` is the element type parameters are computed and gathered in,
    `reduce` the type gradients are reduced in, and the optional `buffer`
    (f32, bf16 or f16; FSDP's `MixedPrecision(buffer_dtype=...)`) the type
    the buffers the unit owns are computed with: zshard-shard rounds each
    of them to it before its first use (docs/passes.md, "Buffer dtype").
    Without `buffer`, buffers are used in their own type. Hybrid strategies
    shard over `shard_axes` and replicate over `replicate` axes; the others
    have no replicate axes.

    ```mlir
    shard.grid @world(shape = 4)
    zshard.unit @h.0 on @world[0] full_shard padded(8448) param(bf16) reduce(f32)
        buffer(bf16) [
      "h.0.ln_1.weight" : 64 at 0,
      "h.0.attn.c_attn.weight" : 64x128 at 64
    ]
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    FlatSymbolRefAttr:$grid,
    DenseI64ArrayAttr:$shard_axes,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$replicate_axes,
    ZShard_Strategy:$strategy,
    I64Prop:$padded_size,
    TypeAttrOf<AnyFloat>:$param_type,
    TypeAttrOf<AnyFloat>:$reduce_type,
    OptionalAttr<TypeAttrOf<AnyFloat>>:$buffer_type,
    TypedArrayAttrBase<ZShard_MemberAttr, "unit members">:$members
  );
  let assemblyFormat = [{
    $sym_name `on` $grid `` $shard_axes (`replicate` $replicate_axes^)?
    $strategy `padded` `(` $padded_size `)` `param` `(` $param_type `)`
    `reduce` `(` $reduce_type `)` (`buffer` `(` $buffer_type^ `)`)?
    custom<UnitMembers>($members) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// One past the last element any member occupies.
    int64_t getExtent();
    /// Elements each rank holds: padded size / shard group size, or
    /// std::nullopt when the group size is not static.
    std::optional<int64_t> getShardSize();
    /// True for the strategies that shard inside a group and replicate across.
    bool isHybrid();
  }];
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

class ZShard_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : ZShard_Op<mnemonic, traits # [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        DeclareOpInterfaceMethods<ZShard_CollectiveOpInterface,
            ["getResultTensorType", "getCollectiveKind", "getReduceKindIfAny",
             "isAsync"]>,
        ZShard_CommEffects]> {
  code commonArgsDoc = [{
    The group is formed by `grid_axes` of the `shard.grid` named by `grid`;
    its size is the product of those axes' sizes. `unit`, when present, names
    the `zshard.unit` whose flat buffer this collective moves, and the
    verifier checks the buffer against the unit's padded size, element types
    and axes.
  }];
}

def ZShard_AllGatherOp : ZShard_CollectiveOp<"all_gather"> {
  let summary = "Gather every rank's shard into the full buffer";
  let description = [{
    Concatenates the input of every rank in the group along dimension 0, in
    rank order: the result's dimension 0 is the input's times the group size;
    other dimensions and the element type are unchanged.
  }] # commonArgsDoc # [{
    ```mlir
    %full = zshard.all_gather %shard on @world[0] unit @h.0
        : tensor<2112xbf16> -> tensor<8448xbf16>
    ```
  }];
  let arguments = (ins ZShard_Tensor:$input, FlatSymbolRefAttr:$grid,
                       DenseI64ArrayAttr:$grid_axes,
                       OptionalAttr<FlatSymbolRefAttr>:$unit);
  let results = (outs ZShard_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `` $grid_axes (`unit` $unit^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasCanonicalizer = 1;
}

def ZShard_ReduceScatterOp : ZShard_CollectiveOp<"reduce_scatter"> {
  let summary = "Reduce the full buffer across ranks, keep this rank's shard";
  let description = [{
    Reduces the inputs of all ranks in the group elementwise (`sum` or `avg`;
    `max` is also accepted) and gives each rank the slice of dimension 0 at
    its position in the group: the input's dimension 0 is the result's times
    the group size.
  }] # commonArgsDoc # [{
    ```mlir
    %gshard = zshard.reduce_scatter avg %grad on @world[0] unit @h.0
        : tensor<8448xf32> -> tensor<2112xf32>
    ```
  }];
  let arguments = (ins ZShard_ReduceKind:$reduce, ZShard_Tensor:$input,
                       FlatSymbolRefAttr:$grid,
                       DenseI64ArrayAttr:$grid_axes,
                       OptionalAttr<FlatSymbolRefAttr>:$unit);
  let results = (outs ZShard_Tensor:$result);
  let assemblyFormat = [{
    $reduce $input `on` $grid `` $grid_axes (`unit` $unit^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def ZShard_AllReduceOp : ZShard_CollectiveOp<"all_reduce",
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "Reduce a buffer across ranks, every rank gets the result";
  let description = [{
    Reduces the inputs of all ranks in the group elementwise; every rank
    receives the whole result. Used for no-shard gradients, for replicas in
    hybrid sharding, and for cross-shard reductions such as a global
    gradient norm.
  }] # commonArgsDoc # [{
    ```mlir
    %sq = zshard.all_reduce sum %partial on @world[0] : tensor<f32>
    ```
  }];
  let arguments = (ins ZShard_ReduceKind:$reduce, ZShard_Tensor:$input,
                       FlatSymbolRefAttr:$grid,
                       DenseI64ArrayAttr:$grid_axes,
                       OptionalAttr<FlatSymbolRefAttr>:$unit);
  let results = (outs ZShard_Tensor:$result);
  let assemblyFormat = [{
    $reduce $input `on` $grid `` $grid_axes (`unit` $unit^)? attr-dict
    `:` type($input)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Async collectives
//===----------------------------------------------------------------------===//

def ZShard_AllGatherStartOp : ZShard_CollectiveOp<"all_gather_start"> {
  let summary = "Start an all_gather; its result is read by zshard.wait";
  let description = [{
    The asynchronous form of `zshard.all_gather`. The token carries the type
    of the gathered tensor and must be consumed by exactly one `zshard.wait`.
  }] # commonArgsDoc # [{
    ```mlir
    %t = zshard.all_gather_start %shard on @world[0] unit @h.0
        : tensor<2112xbf16> -> !zshard.token<tensor<8448xbf16>>
    %full = zshard.wait %t : !zshard.token<tensor<8448xbf16>>
    ```
  }];
  let arguments = (ins ZShard_Tensor:$input, FlatSymbolRefAttr:$grid,
                       DenseI64ArrayAttr:$grid_axes,
                       OptionalAttr<FlatSymbolRefAttr>:$unit);
  let results = (outs ZShard_AnyToken:$token);
  let assemblyFormat = [{
    $input `on` $grid `` $grid_axes (`unit` $unit^)? attr-dict
    `:` type($input) `->` qualified(type($token))
  }];
}

def ZShard_ReduceScatterStartOp : ZShard_CollectiveOp<"reduce_scatter_start"> {
  let summary = "Start a reduce_scatter; its result is read by zshard.wait";
  let description = [{
    The asynchronous form of `zshard.reduce_scatter`.
  }] # commonArgsDoc;
  let arguments = (ins ZShard_ReduceKind:$reduce, ZShard_Tensor:$input,
                       FlatSymbolRefAttr:$grid,
                       DenseI64ArrayAttr:$grid_axes,
                       OptionalAttr<FlatSymbolRefAttr>:$unit);
  let results = (outs ZShard_AnyToken:$token);
  let assemblyFormat = [{
    $reduce $input `on` $grid `` $grid_axes (`unit` $unit^)? attr-dict
    `:` type($input) `->` qualified(type($token))
  }];
}

def ZShard_AllReduceStartOp : ZShard_CollectiveOp<"all_reduce_start"> {
  let summary = "Start an all_reduce; its result is read by zshard.wait";
  let description = [{
    The asynchronous form of `zshard.all_reduce`.
  }] # commonArgsDoc;
  let arguments = (ins ZShard_ReduceKind:$reduce, ZShard_Tensor:$input,
                       FlatSymbolRefAttr:$grid,
                       DenseI64ArrayAttr:$grid_axes,
                       OptionalAttr<FlatSymbolRefAttr>:$unit);
  let results = (outs ZShard_AnyToken:$token);
  let assemblyFormat = [{
    $reduce $input `on` $grid `` $grid_axes (`unit` $unit^)? attr-dict
    `:` type($input) `->` qualified(type($token))
  }];
}

def ZShard_WaitOp : ZShard_Op<"wait", [
    ZShard_CommEffects,
    TypesMatchWith<"result type matches the token's payload", "token",
                   "result", "::llvm::cast<TokenType>($_self).getResult()">]> {
  let summary = "Wait for an async collective and take its result";
  let description = [{
    Consumes the token of a `*_start` op and yields the collective's result.
    A wait's token must come straight from a start op, and each start's token
    is waited exactly once.

    ```mlir
    %full = zshard.wait %t : !zshard.token<tensor<8448xbf16>>
    ```
  }];
  let arguments = (ins ZShard_AnyToken:$token);
  let results = (outs ZShard_Tensor:$result);
  let assemblyFormat = "$token attr-dict `:` qualified(type($token))";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// The start op whose token this wait consumes, or null.
    ::mlir::zshard::CollectiveOpInterface getStart();
  }];
}

//===----------------------------------------------------------------------===//
// Lifetimes
//===----------------------------------------------------------------------===//

def ZShard_ReleaseOp : ZShard_Op<"release", [ZShard_CommEffects]> {
  let summary = "A gathered buffer may be freed after this point";
  let description = [{
    Marks the end of the lifetime of a gathered unit buffer (FSDP's reshard).
    The operand must be the result of `zshard.all_gather`, or of the
    `zshard.wait` of an `all_gather_start`; it is released at most once and
    not used after its release in the same block. A unit may not be gathered
    again while an earlier gather of it is not yet released.

    ```mlir
    zshard.release %full : tensor<8448xbf16>
    ```
  }];
  let arguments = (ins ZShard_Tensor:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

/// A `tensor<f32>` scalar operand (buildable, so the assembly omits it).
def ZShard_F32Scalar : Type<
    CPred<"::llvm::isa<::mlir::RankedTensorType>($_self) && "
          "::llvm::cast<::mlir::RankedTensorType>($_self).getRank() == 0 && "
          "::llvm::cast<::mlir::RankedTensorType>($_self).getElementType()"
          ".isF32()">,
    "tensor<f32>", "::mlir::RankedTensorType">,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF32Type())">;

def ZShard_AdamWOp : ZShard_Op<"adamw", [Pure, AttrSizedOperandSegments,
    InferTypeOpAdaptor]> {
  let summary = "The AdamW update of one parameter";
  let description = [{
    The optimizer update of one parameter (torch.optim.AdamW: decoupled
    weight decay, bias-corrected moments), on tensors. `zshard-shard` finds
    each parameter's update as this op (`OptimizerAnalysis`) and rebuilds it
    on this rank's part of the shards, and the cost model costs it as the
    elementwise loop it becomes. `zshard-lower-adamw`, which the lowering
    pipelines run after sharding and offloading and before bufferization,
    turns it into one fused elementwise `linalg.generic` (after a 0-d one for
    the bias corrections), the one place its arithmetic is written; the
    in-place update then writes that generic into the state's own buffers.
    With `t = step`, `bc1 = 1 - beta1^t` and `bc2 = 1 - beta2^t`:

    ```
    g = grad * grad_scale                     (when grad_scale is given)
    p = p - lr * weight_decay * p             (when weight_decay != 0)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    p = p - lr * (m / bc1) / (sqrt(v / bc2) + eps)
    ```

    Arithmetic is f32; `grad` (and `param`) may be narrower floats and are
    extended first. With `master`, an f32 copy of the parameter, the update
    runs on the master (the value of `param` is not read) and `new_param`
    is the new master rounded to `param`'s element type. `grad_scale` is the
    gradient-clipping coefficient, applied before anything else.

    `order` is how the frontend's reference rounds the same update, which
    the lowering reproduces bit for bit: `textbook` evaluates the formulas
    above as written, left to right, with `1 - beta` rounded from the f32
    `beta` (zshard-gen, docs/models.md); `torch` in the order of
    torch.optim.AdamW's single-tensor step (`p * (1 - lr * weight_decay)`,
    `m + (1 - beta1) * (g - m)`, `v * beta2 + (1 - beta2) * g * g`, and
    `p + (-(lr / bc1)) * m / (sqrt(v) / sqrt(bc2) + eps)`, constants rounded
    to f32 from the f64 attributes), as zshard-export writes it.

    `grad`, `exp_avg`, `exp_avg_sq` and `master` have `param`'s shape; the
    moments and the master are f32. The results are the new parameter,
    moments and master, of their operands' types.

    ```mlir
    %p, %m, %v = zshard.adamw textbook %w, %g, %m0, %v0 lr %lr step %t
        betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
        : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
    ```
  }];
  let arguments = (ins
    ZShard_AdamWOrder:$order,
    AnyRankedTensor:$param,
    AnyRankedTensor:$grad,
    AnyRankedTensor:$exp_avg,
    AnyRankedTensor:$exp_avg_sq,
    Optional<AnyRankedTensor>:$master,
    ZShard_F32Scalar:$lr,
    ZShard_F32Scalar:$step,
    Optional<ZShard_F32Scalar>:$grad_scale,
    F64Attr:$beta1,
    F64Attr:$beta2,
    F64Attr:$eps,
    F64Attr:$weight_decay
  );
  let results = (outs
    AnyRankedTensor:$new_param,
    AnyRankedTensor:$new_exp_avg,
    AnyRankedTensor:$new_exp_avg_sq,
    Optional<AnyRankedTensor>:$new_master
  );
  let assemblyFormat = [{
    $order $param `,` $grad `,` $exp_avg `,` $exp_avg_sq
    (`master` $master^ `:` type($master))?
    `lr` $lr `step` $step (`grad_scale` $grad_scale^)?
    `betas` `(` $beta1 `,` $beta2 `)` `eps` `(` $eps `)`
    `weight_decay` `(` $weight_decay `)` attr-dict
    `:` type($param) `,` type($grad) `,` type($exp_avg) `,` type($exp_avg_sq)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def ZShard_F32Tensor4 : 4DTensorOf<[F32]>;

def ZShard_CausalAttentionOp : ZShard_Op<"causal_attention", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Causal softmax attention that keeps only its output and lse";
  let description = [{
    Causal scaled dot-product attention of `q : [B, H, T, D]` over
    `k, v : [B, KV, T, D]` (grouped-query when `KV < H`: head `h` reads kv
    head `h / (H / KV)`, as Hugging Face's `repeat_kv`):

    ```
    s[b, h, t, u] = scale * q[b, h, t, :] . k[b, h / G, u, :]   (u <= t)
    lse[b, h, t]  = log sum_{u <= t} exp(s[b, h, t, u])
    out[b, h, t]  = sum_{u <= t} exp(s[b, h, t, u] - lse[b, h, t]) v[b, h / G, u]
    ```

    Results are `out` (q's type) and the per-row logsumexp `lse : [B, H, T]`,
    which is all `zshard.causal_attention_grad` needs: no `[T, T]` tensor is
    a value of the step, so none is live between forward and backward. The
    lowering (`zshard-attention-to-runtime`) calls the runtime's tiled
    online-softmax kernel (docs/attention.md). All tensors are f32.

    ```mlir
    %o, %lse = zshard.causal_attention %q, %k, %v scale(0.125)
        : tensor<2x6x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x2x12x8xf32>
    ```
  }];
  let arguments = (ins ZShard_F32Tensor4:$q, ZShard_F32Tensor4:$k,
                       ZShard_F32Tensor4:$v, F32Attr:$scale);
  let results = (outs ZShard_F32Tensor4:$out, 3DTensorOf<[F32]>:$lse);
  let assemblyFormat = [{
    $q `,` $k `,` $v `scale` `(` $scale `)` attr-dict
    `:` type($q) `,` type($k) `,` type($v)
  }];
  let hasVerifier = 1;
}

def ZShard_CausalAttentionGradOp : ZShard_Op<"causal_attention_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "The backward of zshard.causal_attention, recomputing scores";
  let description = [{
    Given the operands of `zshard.causal_attention`, its results `out` and
    `lse`, and the output's gradient `dout`, returns `dq, dk, dv` (of the
    types of `q, k, v`; the gradients of a kv head sum over the heads of its
    group). With `p = exp(s - lse)` recomputed tile by tile and
    `delta[t] = dout[t] . out[t]`:

    ```
    dv = p^T dout,  ds = p * (dout v^T - delta),  dq = scale ds k,
    dk = scale ds^T q
    ```

    ```mlir
    %dq, %dk, %dv = zshard.causal_attention_grad %q, %k, %v, %o, %lse, %do
        scale(0.125) : tensor<2x6x12x8xf32>, tensor<2x2x12x8xf32>,
        tensor<2x2x12x8xf32>, tensor<2x6x12x8xf32>, tensor<2x6x12xf32>,
        tensor<2x6x12x8xf32>
    ```
  }];
  let arguments = (ins ZShard_F32Tensor4:$q, ZShard_F32Tensor4:$k,
                       ZShard_F32Tensor4:$v, ZShard_F32Tensor4:$out,
                       3DTensorOf<[F32]>:$lse, ZShard_F32Tensor4:$dout,
                       F32Attr:$scale);
  let results = (outs ZShard_F32Tensor4:$dq, ZShard_F32Tensor4:$dk,
                      ZShard_F32Tensor4:$dv);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $out `,` $lse `,` $dout `scale` `(` $scale `)`
    attr-dict `:` type($q) `,` type($k) `,` type($v) `,` type($out) `,`
    type($lse) `,` type($dout)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Batch statistics
//===----------------------------------------------------------------------===//

def ZShard_BatchMeanOp : ZShard_Op<"batch_mean", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "The mean of a value over every slice of the global batch";
  let description = [{
    The step computes `input` on its slice of the global batch (a rank's
    rows, or a microbatch of them); the result is the mean of `input` over
    all slices of the global batch, the same on every slice. A loss that is
    a mean over counted positions (cross-entropy with `ignore_index`) is
    `sum / batch_mean(count)` on each slice: averaged over the slices as the
    gradients and the reported loss are, it is the global batch's mean even
    when the slices count different numbers of positions.

    `input` must be computed from the step's batch arguments and constants
    only. `zshard-accumulate` computes it for every microbatch before the
    first one runs and takes their mean; `zshard-shard` makes it an
    `all_reduce avg` over every axis of the units' grid; on a step that runs
    on one rank without microbatches the mean of one slice is `input`
    itself (`zshard-lower-batch-means`).

    ```mlir
    %all = zshard.batch_mean %count : tensor<f32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDOPS_TD
