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

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDATTRS_TD
