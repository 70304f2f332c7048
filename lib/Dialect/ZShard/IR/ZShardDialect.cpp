//===- ZShardDialect.cpp - zshard dialect ---------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardDialect.h"

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

using namespace mlir;
using namespace mlir::zshard;

#include "zshard/Dialect/ZShard/IR/ZShardDialect.cpp.inc"

void ZShardDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "zshard/Dialect/ZShard/IR/ZShardOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}
