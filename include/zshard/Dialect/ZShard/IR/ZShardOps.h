//===- ZShardOps.h - zshard operations --------------------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDOPS_H
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"
#include "zshard/Dialect/ZShard/IR/ZShardDialect.h"
#include "zshard/Dialect/ZShard/IR/ZShardInterfaces.h"
#include "zshard/Dialect/ZShard/IR/ZShardTypes.h"

namespace mlir {
namespace zshard {

/// The side-effect resource all communication reads and writes.
struct CommunicationResource
    : public SideEffects::Resource::Base<CommunicationResource> {
  StringRef getName() final { return "zshard.communication"; }
};

} // namespace zshard
} // namespace mlir

#define GET_OP_CLASSES
#include "zshard/Dialect/ZShard/IR/ZShardOps.h.inc"

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDOPS_H
