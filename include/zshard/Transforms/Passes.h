//===- Passes.h - zshard transformation passes ------------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TRANSFORMS_PASSES_H
#define ZSHARD_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "zshard/Analysis/CostModel.h"
#include "zshard/Analysis/Microbatches.h"
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"
#include "zshard/Dialect/ZShard/IR/ZShardDialect.h"
#include "zshard/Transforms/RematOptions.h"
#include "zshard/Transforms/ScheduleOptions.h"
#include "zshard/Transforms/UnitOptions.h"

namespace mlir {
namespace zshard {

#define GEN_PASS_DECL
#include "zshard/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zshard/Transforms/Passes.h.inc"

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_TRANSFORMS_PASSES_H
