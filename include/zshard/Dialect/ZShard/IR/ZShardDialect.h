//===- ZShardDialect.h - zshard dialect -------------------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Declares the zshard dialect: units, collectives and lifetime points for
/// ahead-of-time FSDP / ZeRO sharding.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDDIALECT_H
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDDIALECT_H

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/Dialect.h"

#include "zshard/Dialect/ZShard/IR/ZShardDialect.h.inc"

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDDIALECT_H
