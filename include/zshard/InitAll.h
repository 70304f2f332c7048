//===- InitAll.h - register zshard and upstream dialects/passes -*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_INITALL_H
#define ZSHARD_INITALL_H

namespace mlir {
class DialectRegistry;

namespace zshard {

/// Registers the zshard dialect and the upstream dialects a training step and
/// its lowering use: func, arith, math, tensor, linalg, bufferization,
/// memref, scf, shard; and the bufferization interface models they need.
void registerAllDialects(DialectRegistry &registry);

/// Registers the zshard passes and the upstream passes that serve them:
/// canonicalize, cse, bufferization and friends.
void registerAllPasses();

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_INITALL_H
