//===- GPUMergeKernelModules.cpp - --zshard-gpu-merge-kernel-modules ------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Moves the kernels gpu-kernel-outlining put in one gpu.module each into
/// a single gpu.module, renaming each after its old module, and points the
/// launches at them: one GPU binary to build, embed and load per step.
///
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_GPUMERGEKERNELMODULES
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

struct GPUMergeKernelModulesPass
    : public mlir::zshard::impl::GPUMergeKernelModulesBase<
          GPUMergeKernelModulesPass> {
  void runOnOperation() override;
};

} // namespace

void GPUMergeKernelModulesPass::runOnOperation() {
  ModuleOp module = getOperation();
  // Only modules of kernels alone (what outlining makes) are merged.
  SmallVector<gpu::GPUModuleOp> modules;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
    if (llvm::all_of(gpuModule.getBody()->getOperations(),
                     [](Operation &op) { return isa<gpu::GPUFuncOp>(op); }))
      modules.push_back(gpuModule);
  if (modules.size() < 2)
    return;

  gpu::GPUModuleOp target = modules.front();
  SymbolTable targetSymbols(target);
  // (old module, old function) -> new function name in `target`.
  llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
  for (gpu::GPUModuleOp source : llvm::drop_begin(modules)) {
    StringAttr moduleName = source.getSymNameAttr();
    bool single = llvm::hasSingleElement(source.getBody()->getOperations());
    for (auto func :
         llvm::make_early_inc_range(source.getOps<gpu::GPUFuncOp>())) {
      StringAttr oldName = func.getNameAttr();
      func->remove();
      // Named after its module (unique at the top level); the table adds a
      // suffix should that name be taken.
      func.setName(
          single ? moduleName.getValue()
                 : (moduleName.getValue() + "_" + oldName.getValue()).str());
      renamed[{moduleName, oldName}] = targetSymbols.insert(func);
    }
    source.erase();
    ++numMerged;
  }

  StringAttr targetName = target.getSymNameAttr();
  module.walk([&](gpu::LaunchFuncOp launch) {
    auto it =
        renamed.find({launch.getKernelModuleName(), launch.getKernelName()});
    if (it == renamed.end())
      return;
    launch.setKernelAttr(
        SymbolRefAttr::get(targetName, {FlatSymbolRefAttr::get(it->second)}));
  });
}
