//===- PathsFromLocations.cpp - --zshard-paths-from-locations -------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Moves module paths written as name locations (`loc("h.0.attn")`, the
/// form steps had before `zshard.path`) into `zshard.path` attributes.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Dialect/ZShard/IR/ZShardContract.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_PATHSFROMLOCATIONS
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

struct PathsFromLocationsPass
    : public mlir::zshard::impl::PathsFromLocationsBase<
          PathsFromLocationsPass> {
  void runOnOperation() override {
    bool ok = true;
    for (auto step : getOperation().getOps<func::FuncOp>()) {
      if (!step->hasAttr(contract::kStep) || step.isExternal())
        continue;
      for (Block &block : step.getBody())
        for (Operation &op : block) {
          if (!needsModulePath(&op) || op.hasAttr(contract::kPath))
            continue;
          std::optional<StringRef> name = getLocationName(op.getLoc());
          if (!name || name->empty())
            continue;
          if (!isValidDottedPath(*name)) {
            // A bare name prints as `loc("h-0"):`; point at the file.
            Location where = op.getLoc()->findInstanceOf<FileLineColLoc>()
                                 ? op.getLoc()
                                 : getReportLoc(step);
            emitError(where)
                << "zshard-paths-from-locations: the name location \"" << *name
                << "\" is not a module path (identifiers and decimal "
                   "indices joined by '.', such as \"h.0.attn\")";
            ok = false;
            continue;
          }
          setModulePath(&op, *name);
          ++numPaths;
        }
    }
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
