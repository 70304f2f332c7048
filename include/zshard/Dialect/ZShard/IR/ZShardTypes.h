//===- ZShardTypes.h - zshard types -----------------------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDTYPES_H
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "zshard/Dialect/ZShard/IR/ZShardTypes.h.inc"

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDTYPES_H
