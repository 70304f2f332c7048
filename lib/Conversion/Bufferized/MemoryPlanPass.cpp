//===- MemoryPlanPass.cpp - --zshard-memory-plan --------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/MemoryPlan.h"
#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Conversion/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_MEMORYPLANPASS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

struct MemoryPlanPass
    : public mlir::zshard::impl::MemoryPlanPassBase<MemoryPlanPass> {
  using MemoryPlanPassBase::MemoryPlanPassBase;

  void runOnOperation() override {
    func::FuncOp step;
    getOperation().walk([&](func::FuncOp func) {
      if (!func.isExternal() && !step)
        step = func;
    });
    if (!step) {
      emitError(getReportLoc(getOperation()),
                "zshard-memory-plan: no function with a body");
      return signalPassFailure();
    }
    MemoryPlan plan(step);
    if (failed(plan.run()))
      return signalPassFailure();
    InFlightDiagnostic remark = emitRemark(getReportLoc(step))
                                << "memory plan: peak " << plan.getPeakTotal()
                                << " bytes:";
    for (int c = 0; c < kNumMemCategories; ++c)
      remark << " " << stringifyMemCategory(MemCategory(c)) << " "
             << plan.getLiveAtPeak()[c];
    if (Operation *at = plan.getPeakOp())
      remark.attachNote(at->getLoc()) << "the peak is reached here";
    if (report.empty())
      return;
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(report, &error);
    if (!out) {
      emitError(getReportLoc(getOperation()), "zshard-memory-plan: ") << error;
      return signalPassFailure();
    }
    out->os() << plan.toJSON() << "\n";
    out->keep();
  }
};

} // namespace
