//===- ZShardPrinting.h - custom assembly directives ------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The custom<...> directives used by the zshard assembly formats.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDPRINTING_H
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDPRINTING_H

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

namespace mlir {
namespace zshard {

/// A member shape: `64x128`, `64`, or `scalar` for rank 0.
ParseResult parseMemberShape(AsmParser &parser, SmallVector<int64_t> &shape);
void printMemberShape(AsmPrinter &printer, ArrayRef<int64_t> shape);

/// The member list of a unit:
///   [ "name" : 64x128 at 0, "other" : 128 at 8192 ]
ParseResult parseUnitMembers(OpAsmParser &parser, ArrayAttr &members);
void printUnitMembers(OpAsmPrinter &printer, Operation *op, ArrayAttr members);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDPRINTING_H
