//===- ZShardTypes.cpp - zshard types -------------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "zshard/Dialect/ZShard/IR/ZShardDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zshard;

#define GET_TYPEDEF_CLASSES
#include "zshard/Dialect/ZShard/IR/ZShardTypes.cpp.inc"

void ZShardDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "zshard/Dialect/ZShard/IR/ZShardTypes.cpp.inc"
      >();
}
