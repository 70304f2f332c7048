//===- CostModelPass.cpp - --zshard-cost-model ----------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/CostModel.h"
#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_COSTMODELPASS
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

struct CostModelPass
    : public mlir::zshard::impl::CostModelPassBase<CostModelPass> {
  using CostModelPassBase::CostModelPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    DeviceModel dev = getDeviceModel(device);
    LinkModel net = getLinkModel(link);
    if (peakFlops > 0)
      dev.f32Flops = dev.bf16Flops = peakFlops;
    if (memBandwidth > 0)
      dev.memoryBandwidth = memBandwidth;
    if (linkBandwidth > 0)
      net.bandwidth = linkBandwidth;
    if (linkLatency >= 0)
      net.latency = linkLatency;
    StepContract contract(module);
    if (failed(contract.run()))
      return signalPassFailure();
    FailureOr<CostReport> cost =
        CostModel(dev, net).estimate(contract.getStep());
    if (failed(cost))
      return signalPassFailure();
    // The figures as one JSON object, named by the presets they assume.
    llvm::json::Object figures = cost->toJSONObject();
    figures["device"] = dev.name;
    figures["link"] = net.name;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(figures));
    emitRemark(getReportLoc(contract.getStep()))
        << "zshard-cost-model: " << text;
    if (report.empty())
      return;
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(report, &error);
    if (!out) {
      emitError(getReportLoc(module), "zshard-cost-model: ") << error;
      return signalPassFailure();
    }
    out->os() << cost->toJSON() << "\n";
    out->keep();
  }
};

} // namespace
