//===- ZShardAttrs.h - zshard attributes and enums --------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDATTRS_H
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"

#include "zshard/Dialect/ZShard/IR/ZShardEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h.inc"

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDATTRS_H
