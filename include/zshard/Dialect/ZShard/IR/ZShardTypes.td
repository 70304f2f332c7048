//===- ZShardTypes.td - zshard types -----------------------*- tablegen -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDTYPES_TD
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDTYPES_TD

include "zshard/Dialect/ZShard/IR/ZShardDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypes.td"

def ZShard_TokenType : TypeDef<ZShard_Dialect, "Token"> {
  let mnemonic = "token";
  let summary = "An in-flight asynchronous collective";
  let description = [{
    Returned by an asynchronous collective start op and consumed by exactly one
    `zshard.wait`, which yields the collective's result. The parameter is the
    type of that result.

    ```mlir
    !zshard.token<tensor<512xbf16>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$result);
  let assemblyFormat = "`<` $result `>`";
}

def ZShard_AnyToken : Type<CPred<"::llvm::isa<::mlir::zshard::TokenType>($_self)">,
                           "async collective token", "::mlir::zshard::TokenType">;

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDTYPES_TD
