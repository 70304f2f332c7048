//===- ZShardDialect.td - zshard dialect definition --------*- tablegen -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDDIALECT_TD
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDDIALECT_TD

include "mlir/IR/OpBase.td"

def ZShard_Dialect : Dialect {
  let name = "zshard";
  let cppNamespace = "::mlir::zshard";
  let summary = "Ahead-of-time FSDP / ZeRO sharding: units, collectives, lifetimes";
  let description = [{
    The `zshard` dialect holds what upstream MLIR lacks to express a training
    step sharded the way PyTorch FSDP and DeepSpeed ZeRO shard it:

    * `zshard.unit`: one flat parameter group (FSDP's FlatParameter): its
      members with their shapes and offsets in the flat buffer, the padded size
      (a multiple of the shard group size), the `shard.grid` axes it is sharded
      and replicated over, its strategy, and its parameter and reduce element
      types;
    * collectives over named axes of a `shard.grid`: `all_gather`,
      `reduce_scatter` (sum or average) and `all_reduce`, each with an async
      form (`*_start` returning a `!zshard.token`, consumed by `zshard.wait`),
      all implementing `CollectiveOpInterface`;
    * `zshard.release`, the point after which a gathered buffer may be freed.

    Element types are explicit on every collective, so mixed precision lives
    in the IR and not in a runtime flag. The device grid is the upstream
    `shard.grid` symbol.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasCanonicalizer = 0;
  // The contract's argument and result attributes (zshard.role, ...) are
  // typed and checked by the dialect (ZShardContractAttrs.cpp).
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  // zshard.phase on an op is a #zshard.phase (ZShardContractAttrs.cpp).
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
  private:
    void registerAttributes();
    void registerTypes();
  public:
  }];
}

class ZShard_Op<string mnemonic, list<Trait> traits = []>
    : Op<ZShard_Dialect, mnemonic, traits>;

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDDIALECT_TD
