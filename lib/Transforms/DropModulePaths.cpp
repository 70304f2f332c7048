//===- DropModulePaths.cpp - --zshard-drop-module-paths -------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Drops the `zshard.path` attributes of a module's ops once units and
/// checkpointing have read them.
///
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardContract.h"
#include "zshard/Transforms/Passes.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_DROPMODULEPATHS
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

struct DropModulePathsPass
    : public mlir::zshard::impl::DropModulePathsBase<DropModulePathsPass> {
  void runOnOperation() override {
    getOperation().walk([&](Operation *op) {
      if (op->removeAttr(zshard::contract::kPath))
        ++numDropped;
    });
  }
};

} // namespace
