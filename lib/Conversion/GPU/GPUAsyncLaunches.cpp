//===- GPUAsyncLaunches.cpp - --zshard-gpu-async-launches -----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Chains the kernel launches of a straight-line step on one stream:
/// a `gpu.wait async` at entry, each launch asynchronous on the token of
/// the previous one, and a `gpu.wait` before returning, instead of a stream
/// created, synchronized and destroyed around every launch.
///
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_GPUASYNCLAUNCHES
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

struct GPUAsyncLaunchesPass
    : public mlir::zshard::impl::GPUAsyncLaunchesBase<GPUAsyncLaunchesPass> {
  void runOnOperation() override;
};

} // namespace

void GPUAsyncLaunchesPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return;
  Block &body = func.getBody().front();
  SmallVector<gpu::LaunchFuncOp> launches;
  for (auto launch : body.getOps<gpu::LaunchFuncOp>())
    if (!launch.getAsyncToken() && launch.getAsyncDependencies().empty() &&
        !launch.getAsyncObject())
      launches.push_back(launch);
  // Launches nested in regions (none in a bufferized step) stay synchronous.
  if (launches.empty())
    return;

  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  Type tokenType = gpu::AsyncTokenType::get(&getContext());
  Value token =
      gpu::WaitOp::create(builder, func.getLoc(), tokenType, ValueRange())
          .getAsyncToken();
  for (gpu::LaunchFuncOp launch : launches) {
    builder.setInsertionPoint(launch);
    std::optional<gpu::KernelDim3> cluster;
    if (launch.hasClusterSize())
      cluster = launch.getClusterSizeOperandValues();
    auto async = gpu::LaunchFuncOp::create(
        builder, launch.getLoc(), launch.getKernelAttr(),
        launch.getGridSizeOperandValues(), launch.getBlockSizeOperandValues(),
        launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
        tokenType, ValueRange{token}, cluster);
    token = async.getAsyncToken();
    launch.erase();
    ++numLaunches;
  }
  Operation *terminator = body.getTerminator();
  builder.setInsertionPoint(terminator);
  gpu::WaitOp::create(builder, terminator->getLoc(), Type(), ValueRange{token});
}
