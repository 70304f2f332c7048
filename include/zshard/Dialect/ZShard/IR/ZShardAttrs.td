//===- ZShardAttrs.td - zshard attributes and enums --------*- tablegen -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDATTRS_TD
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDATTRS_TD

include "zshard/Dialect/ZShard/IR/ZShardDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

// Strategy and ReduceKind are stored as integer attributes (as arith.cmpi's
// predicate is) so that op assembly prints the bare keyword.
def ZShard_Strategy : I32EnumAttr<"Strategy", "FSDP / ZeRO sharding strategy", [
  I32EnumAttrCase<"NoShard", 0, "no_shard">,
  I32EnumAttrCase<"Zero1", 1, "zero1">,
  I32EnumAttrCase<"ShardGradOp", 2, "shard_grad_op">,
  I32EnumAttrCase<"FullShard", 3, "full_shard">,
  I32EnumAttrCase<"HybridShard", 4, "hybrid_shard">,
  I32EnumAttrCase<"HybridShardZero2", 5, "hybrid_shard_zero2">
]> {
  let cppNamespace = "::mlir::zshard";
}

def ZShard_ReduceKind : I32EnumAttr<"ReduceKind", "reduction of a collective", [
  I32EnumAttrCase<"Sum", 0, "sum">,
  I32EnumAttrCase<"Avg", 1, "avg">,
  I32EnumAttrCase<"Max", 2, "max">
]> {
  let cppNamespace = "::mlir::zshard";
}

// The order of AdamW's floating-point operations: the same update, rounded
// as the frontend's reference computes it (see zshard.adamw).
def ZShard_AdamWOrder : I32EnumAttr<"AdamWOrder",
    "order of AdamW's floating-point operations", [
  I32EnumAttrCase<"Textbook", 0, "textbook">,
  I32EnumAttrCase<"Torch", 1, "torch">
]> {
  let cppNamespace = "::mlir::zshard";
}

def ZShard_CollectiveKind : I32EnumAttr<"CollectiveKind", "kind of collective", [
  I32EnumAttrCase<"AllGather", 0, "all_gather">,
  I32EnumAttrCase<"ReduceScatter", 1, "reduce_scatter">,
  I32EnumAttrCase<"AllReduce", 2, "all_reduce">
]> {
  let cppNamespace = "::mlir::zshard";
  let genSpecializedAttr = 0;
}

// Where the runtime keeps a step argument (zshard-offload places optimizer
// state on the host).
def ZShard_ArgPlacement : I32EnumAttr<"ArgPlacement",
    "where the runtime keeps a step argument", [
  I32EnumAttrCase<"Device", 0, "device">,
  I32EnumAttrCase<"Host", 1, "host">
]> {
  let cppNamespace = "::mlir::zshard";
  let genSpecializedAttr = 0;
}

// The phase of a top-level op of the step: PhaseAnalysis derives it from the
// dataflow, zshard-annotate-phases writes it as `zshard.phase`, and the
// memory plan, the allocation tags and the outlined calls read it.
def ZShard_Phase : I32EnumAttr<"Phase",
    "the phase of an op of the training step", [
  I32EnumAttrCase<"Forward", 0, "forward">,
  I32EnumAttrCase<"Backward", 1, "backward">,
  I32EnumAttrCase<"Optimizer", 2, "optimizer">
]> {
  let cppNamespace = "::mlir::zshard";
  let genSpecializedAttr = 0;
}

// What a block of memory holds: the runtime's memory categories, with the
// values and names of zshard_rt_mem_category (zshard/abi/RuntimeCodes.h,
// zshard/abi/MemoryCategory.h), which MemoryPlan.cpp checks against these.
def ZShard_MemCategory : I32EnumAttr<"MemCategory",
    "what a block of memory holds", [
  I32EnumAttrCase<"Parameters", 0, "parameters">,
  I32EnumAttrCase<"Gradients", 1, "gradients">,
  I32EnumAttrCase<"OptimizerState", 2, "optimizer_state">,
  I32EnumAttrCase<"Activations", 3, "activations">,
  I32EnumAttrCase<"Communication", 4, "communication">,
  I32EnumAttrCase<"Other", 5, "other">,
  I32EnumAttrCase<"HostOffload", 6, "host_offload">,
  I32EnumAttrCase<"Buffers", 7, "buffers">
]> {
  let cppNamespace = "::mlir::zshard";
  let genSpecializedAttr = 0;
}

// The role of a step argument or result (docs/contract.md, "Roles"). The
// argument roles have the values of zshard_abi::ArgRole and the result roles
// those of zshard_abi::ResultRole plus 16 (zshard/abi/Roles.h), which the
// compiler checks against these in one place (toAbiArgRole, toAbiResultRole).
def ZShard_Role : I32EnumAttr<"Role",
    "the role of a step argument or result", [
  I32EnumAttrCase<"Param", 0, "param">,
  I32EnumAttrCase<"OptState", 1, "opt_state">,
  I32EnumAttrCase<"Batch", 2, "batch">,
  I32EnumAttrCase<"Hyper", 3, "hyper">,
  I32EnumAttrCase<"ParamShard", 4, "param_shard">,
  I32EnumAttrCase<"OptStateShard", 5, "opt_state_shard">,
  I32EnumAttrCase<"Buffer", 6, "buffer">,
  I32EnumAttrCase<"Loss", 16, "loss">,
  I32EnumAttrCase<"ParamOut", 17, "param_out">,
  I32EnumAttrCase<"OptStateOut", 18, "opt_state_out">,
  I32EnumAttrCase<"ParamShardOut", 19, "param_shard_out">,
  I32EnumAttrCase<"OptStateShardOut", 20, "opt_state_shard_out">
]> {
  let cppNamespace = "::mlir::zshard";
  let genSpecializedAttr = 0;
}

// The device a step is compiled for.
def ZShard_StepTarget : I32EnumAttr<"StepTarget",
    "the device a step is compiled for", [
  I32EnumAttrCase<"CPU", 0, "cpu">,
  I32EnumAttrCase<"CUDA", 1, "cuda">
]> {
  let cppNamespace = "::mlir::zshard";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// The training-step contract (docs/contract.md)
//===----------------------------------------------------------------------===//

def ZShard_RoleAttr : EnumAttr<ZShard_Dialect, ZShard_Role, "role"> {
  let summary = "The contract role of a step argument or result";
  let description = [{
    What an argument or result of the training step is (docs/contract.md,
    "Roles"), as the argument or result attribute `zshard.role`:

    ```mlir
    func.func @train_step(%w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, ...})
        -> (tensor<f32> {zshard.role = #zshard.role<loss>}, ...)
    ```

    Argument roles: `param`, `opt_state`, `buffer`, `batch`, `hyper`, and
    once sharded `param_shard`, `opt_state_shard`. Result roles: `loss`,
    `param_out`, `opt_state_out`, `param_shard_out`, `opt_state_shard_out`.
    The dialect rejects a result role on an argument and the reverse.
  }];
  let assemblyFormat = "`<` $value `>`";
  let extraClassDeclaration = [{
    /// Whether this is the role of an argument (else of a result).
    bool isArgumentRole() const {
      return ::mlir::zshard::isArgumentRole(getValue());
    }
  }];
}

def ZShard_PhaseAttr : EnumAttr<ZShard_Dialect, ZShard_Phase, "phase"> {
  let summary = "The phase of an op of the training step";
  let description = [{
    The op attribute `zshard.phase`: `#zshard.phase<forward>`,
    `#zshard.phase<backward>` or `#zshard.phase<optimizer>`. Written by
    `zshard-annotate-phases` from PhaseAnalysis; a frontend may state it,
    and `zshard-verify-contract` then checks it against the derived phase.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def ZShard_MemCategoryAttr : EnumAttr<ZShard_Dialect, ZShard_MemCategory,
                                      "category"> {
  let summary = "What an allocation holds, for the memory accounting";
  let description = [{
    The op attribute `zshard.category` on a `memref.alloc`, such as
    `#zshard.category<communication>`: the runtime category a lowering
    already knows (a gathered unit, a reduced gradient, an attention
    output), which `zshard-tag-allocations` charges the buffer to instead
    of deriving it from its users' phases.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def ZShard_PlacementAttr : EnumAttr<ZShard_Dialect, ZShard_ArgPlacement,
                                    "placement"> {
  let summary = "Where the runtime keeps a step argument";
  let description = [{
    The argument attribute `zshard.placement`: `#zshard.placement<device>`
    (the default) or `#zshard.placement<host>`, the runtime's host pool,
    which `zshard-offload` gives optimizer state.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def ZShard_InitAttr : AttrDef<ZShard_Dialect, "Init"> {
  let mnemonic = "init";
  let summary = "How the runtime initialises a step argument";
  let description = [{
    An init spec (docs/contract.md, "Init specs"; the grammar is the
    runtime's, `zshard/abi/InitSpec.h`), as the argument attribute
    `zshard.init` of a `param`, `opt_state` or `buffer` and, one per unit
    member, in the `zshard.inits` array of a shard:

    ```mlir
    #zshard.init<normal(0, 0.02)>
    #zshard.init<uniform(-0.5, 0.5)>
    #zshard.init<zeros>
    #zshard.init<ones>
    #zshard.init<param>
    ```

    `param` (optimizer state that starts as a copy of its parameter) is for
    optimizer state only. The verifier rejects a negative STD and LOW >=
    HIGH, with the runtime's words.
  }];
  let parameters = (ins "::zshard_abi::InitSpec":$spec);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The runtime's spelling ("normal(0, 0.02)"), which the manifest holds.
    std::string str() const { return getSpec().str(); }
  }];
}

//===----------------------------------------------------------------------===//
// Unit member
//===----------------------------------------------------------------------===//

def ZShard_MemberAttr : AttrDef<ZShard_Dialect, "Member"> {
  let mnemonic = "member";
  let summary = "One parameter of a unit and where it lives in the flat buffer";
  let description = [{
    A parameter of a `zshard.unit`: its stable dotted name, its shape, and the
    element offset of its first element in the unit's flat buffer.

    ```mlir
    #zshard.member<"h.0.attn.c_proj.weight" : 64x64 at 128>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"stable dotted parameter name">:$name,
    ArrayRefParameter<"int64_t", "shape">:$shape,
    "int64_t":$offset
  );
  let assemblyFormat = [{
    `<` $name `:` custom<MemberShape>($shape) `at` $offset `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of elements of the member; 0 for a shape with a zero extent.
    int64_t getNumElements() const;
  }];
}

//===----------------------------------------------------------------------===//
// Step ABI: what the artifact's manifest says about the step
//===----------------------------------------------------------------------===//

class ZShard_DefaultEnumParameter<EnumAttrInfo info, string value>
    : EnumParameter<info> {
  let defaultValue = value;
}

// An optional #zshard.init parameter, written in full (`init =
// #zshard.init<zeros>`, as in the arrays of a slot or unit) rather than
// stripped to `<zeros>`.
def ZShard_OptionalInitParameter
    : OptionalParameter<"::mlir::zshard::InitAttr", "an init spec"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::mlir::zshard::InitAttr> {
    ::mlir::zshard::InitAttr init;
    if ($_parser.parseAttribute(init))
      return ::mlir::failure();
    return init;
  }() }];
  let printer = "$_printer.printAttribute($_self)";
}

def ZShard_ABIArgumentAttr : AttrDef<ZShard_Dialect, "ABIArgument"> {
  let mnemonic = "abi_argument";
  let summary = "One argument of a compiled step, as its runtime holds it";
  let description = [{
    An argument of the step, in argument order, as the artifact's manifest
    describes it (docs/runtime.md): its contract role (an argument's role of
    #zshard.role, which the manifest spells as `zshard/abi/Roles.h` does), stable name, tensor type and init spec; for
    optimizer state its parameter; for shards the unit and optimizer-state
    slot; where the runtime keeps it; for a buffer whether checkpoints hold
    it; for a hyper its recorded value (`zshard.default`). Written by
    `zshard-record-abi` from the step contract before lowering.

    ```mlir
    #zshard.abi_argument<role = param_shard, name = "h.0", type = tensor<2112xf32>, unit = "h.0">
    ```
  }];
  let parameters = (ins
    EnumParameter<ZShard_Role>:$role,
    StringRefParameter<"stable dotted name">:$name,
    "::mlir::RankedTensorType":$type,
    ZShard_OptionalInitParameter:$init,
    StringRefParameter<"the parameter of optimizer state", [{""}]>:$param,
    StringRefParameter<"the unit of a shard", [{""}]>:$unit,
    StringRefParameter<"the optimizer-state slot of a shard", [{""}]>:$slot,
    ZShard_DefaultEnumParameter<ZShard_ArgPlacement,
        "::mlir::zshard::ArgPlacement::Device">:$placement,
    OptionalParameter<"::mlir::BoolAttr",
        "a buffer's: whether checkpoints hold it">:$persistent,
    OptionalParameter<"::mlir::FloatAttr",
        "a hyper's recorded value">:$recorded
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def ZShard_ABIResultAttr : AttrDef<ZShard_Dialect, "ABIResult"> {
  let mnemonic = "abi_result";
  let summary = "One result of a compiled step, as its runtime receives it";
  let description = [{
    A result of the step, in result order: its contract role, name (empty
    for the loss), tensor type, the unit and slot of the shard it updates,
    and whether the step writes it into its argument's buffer (`in_place`,
    set by `zshard-update-in-place`).

    ```mlir
    #zshard.abi_result<role = param_shard_out, name = "h.0", type = tensor<2112xf32>, unit = "h.0", in_place = true>
    ```
  }];
  let parameters = (ins
    EnumParameter<ZShard_Role>:$role,
    StringRefParameter<"stable dotted name", [{""}]>:$name,
    "::mlir::RankedTensorType":$type,
    StringRefParameter<"the unit of an updated shard", [{""}]>:$unit,
    StringRefParameter<"the optimizer-state slot of an updated shard",
        [{""}]>:$slot,
    OptionalParameter<"::mlir::BoolAttr",
        "written into its argument's buffer">:$in_place
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether the step writes this result into its argument's buffer.
    bool isInPlace() const { return getInPlace() && getInPlace().getValue(); }
  }];
}

def ZShard_ABISlotAttr : AttrDef<ZShard_Dialect, "ABISlot"> {
  let mnemonic = "abi_slot";
  let summary = "One optimizer-state slot of a unit";
  let description = [{
    An optimizer-state slot of a unit (`m`, `v`, `master`): the element type
    of its shard and the init spec of each member of the unit, in member
    order.

    ```mlir
    #zshard.abi_slot<slot = "m", type = f32, inits = [#zshard.init<zeros>, #zshard.init<zeros>]>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"slot name">:$slot,
    "::mlir::Type":$type,
    "::mlir::ArrayAttr":$inits
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def ZShard_ABIUnitAttr : AttrDef<ZShard_Dialect, "ABIUnit"> {
  let mnemonic = "abi_unit";
  let summary = "A unit's layout, as the runtime builds and saves its shards";
  let description = [{
    What the runtime needs of a `zshard.unit` once lowering has erased it:
    strategy, grid axes, padded and per-rank shard size (-1 when not
    static), element types, members (`#zshard.member`) with the init spec
    of each (`#zshard.init`), and the optimizer-state slots.

    ```mlir
    #zshard.abi_unit<name = "h.0", strategy = full_shard, shard_axes = [0], padded = 8448, shard_size = 2112, param_type = f32, reduce_type = f32, members = [#zshard.member<"h.0.w" : 8448 at 0>], inits = [#zshard.init<normal(0, 0.02)>], slots = []>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"unit name">:$name,
    EnumParameter<ZShard_Strategy>:$strategy,
    "::mlir::DenseI64ArrayAttr":$shard_axes,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$replicate_axes,
    "int64_t":$padded,
    "int64_t":$shard_size,
    "::mlir::Type":$param_type,
    "::mlir::Type":$reduce_type,
    OptionalParameter<"::mlir::Type">:$buffer_type,
    "::mlir::ArrayAttr":$members,
    "::mlir::ArrayAttr":$inits,
    "::mlir::ArrayAttr":$slots
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def ZShard_StepABIAttr : AttrDef<ZShard_Dialect, "StepABI"> {
  let mnemonic = "step_abi";
  let summary = "The ABI of a compiled step: what its artifact's manifest says";
  let description = [{
    The record of a step's ABI that the artifact's manifest is written from
    (docs/runtime.md, "Artifacts"), kept on the module as `zshard.abi` so
    that it survives lowering: the step function, its arguments
    (`#zshard.abi_argument`) and results (`#zshard.abi_result`), its units
    (`#zshard.abi_unit`), the device grid (name and shape, -1 for a dynamic
    size) and the number of ranks, the module's string attributes, the
    target and, for CUDA, the chip. `peak_bytes` is set on an eval entry
    by its memory plan.

    `zshard-record-abi` writes it from the step contract before lowering;
    the passes that change a fact keep it current (`zshard-update-in-place`
    marks results in place, `zshard-extract-eval` keeps the loss alone);
    the manifest is written from it after lowering.

    ```mlir
    module attributes {zshard.abi = #zshard.step_abi<step = "train_step",
        arguments = [...], results = [...], units = [], ranks = 1>} {...}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the step function">:$step,
    "::mlir::ArrayAttr":$arguments,
    "::mlir::ArrayAttr":$results,
    "::mlir::ArrayAttr":$units,
    StringRefParameter<"the device grid", [{""}]>:$grid,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$grid_shape,
    "int64_t":$ranks,
    OptionalParameter<"::mlir::DictionaryAttr">:$module_attrs,
    ZShard_DefaultEnumParameter<ZShard_StepTarget,
        "::mlir::zshard::StepTarget::CPU">:$target,
    StringRefParameter<"a CUDA step's chip", [{""}]>:$chip,
    OptionalParameter<"::mlir::IntegerAttr">:$peak_bytes
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The arguments, results and units as their attributes.
    auto getArgumentRecords() const {
      return getArguments().getAsRange<ABIArgumentAttr>();
    }
    auto getResultRecords() const {
      return getResults().getAsRange<ABIResultAttr>();
    }
    auto getUnitRecords() const {
      return getUnits().getAsRange<ABIUnitAttr>();
    }
    /// This record with `results` in place of its results.
    StepABIAttr withResults(ArrayRef<Attribute> results) const;
    /// This record with `peak_bytes` set.
    StepABIAttr withPeakBytes(int64_t bytes) const;
  }];
}

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDATTRS_TD
