//===- ZShardInterfaces.td - zshard op interfaces ----------*- tablegen -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDINTERFACES_TD
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDINTERFACES_TD

include "mlir/IR/OpBase.td"

def ZShard_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::mlir::zshard";
  let description = [{
    Implemented by every zshard collective, synchronous and asynchronous, so
    that the scheduler, the memory planner and the cost model treat them
    alike: the grid and axes it runs over, its input and (eventual) result
    tensor types, its reduction, and whether it is the start of an async pair.
  }];
  let methods = [
    InterfaceMethod<"The `shard.grid` symbol the collective runs over.",
      "::mlir::FlatSymbolRefAttr", "getGridAttr">,
    InterfaceMethod<"The grid axes that form the communication group.",
      "::llvm::ArrayRef<int64_t>", "getGridAxes">,
    InterfaceMethod<"The unit this collective moves, if it names one.",
      "::mlir::FlatSymbolRefAttr", "getUnitAttr">,
    InterfaceMethod<"The tensor sent by this rank.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getInput">,
    InterfaceMethod<"The type of the tensor this rank receives.",
      "::mlir::RankedTensorType", "getResultTensorType">,
    InterfaceMethod<"The kind of collective.",
      "::mlir::zshard::CollectiveKind", "getCollectiveKind">,
    InterfaceMethod<"The reduction, for reducing collectives.",
      "std::optional<::mlir::zshard::ReduceKind>", "getReduceKindIfAny">,
    InterfaceMethod<"True for the start op of an async pair.",
      "bool", "isAsync">
  ];
  let extraSharedClassDeclaration = [{
    /// Bytes this rank sends into the collective; -1 for a dynamic shape.
    int64_t getInputBytes() {
      return ::mlir::zshard::getStaticBytes($_op.getInput().getType())
          .value_or(-1);
    }
    /// Bytes this rank receives from the collective; -1 for a dynamic shape.
    int64_t getResultBytes() {
      return ::mlir::zshard::getStaticBytes($_op.getResultTensorType())
          .value_or(-1);
    }
  }];
  let verify = [{
    return ::mlir::zshard::detail::verifyCollectiveOp($_op);
  }];
}

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDINTERFACES_TD
