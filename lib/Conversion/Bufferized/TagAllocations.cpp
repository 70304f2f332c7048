//===- TagAllocations.cpp - --zshard-tag-allocations ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Charges each allocation of a compiled step to a memory category by the
/// phases of the ops that write and read it.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/MemoryPlan.h"
#include "zshard/Analysis/PhaseAnalysis.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Conversion/Passes.h"

#include "ZShardToRuntime/RuntimeCalls.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_TAGALLOCATIONS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// The runtime's categories this pass uses (zshard_rt_mem_category).
using Category = MemCategory;
constexpr Category Gradients = MemCategory::Gradients;
constexpr Category Activations = MemCategory::Activations;
constexpr Category Communication = MemCategory::Communication;
constexpr Category Other = MemCategory::Other;

/// The phase an op (or the top-level op holding it) was annotated with.
std::optional<Phase> getAnnotatedPhase(Operation *op, Block *body) {
  Operation *top = body->findAncestorOpInBlock(*op);
  if (!top)
    return std::nullopt;
  auto phase = top->getAttrOfType<PhaseAttr>(contract::kPhase);
  return phase ? std::optional<Phase>(phase.getValue()) : std::nullopt;
}

Category categorize(memref::AllocOp alloc, Block *body) {
  // An allocation may say what it holds (zshard-collectives-to-runtime
  // marks the buffers collectives receive into).
  if (auto given = alloc->getAttrOfType<MemCategoryAttr>(contract::kCategory))
    return given.getValue();
  bool forward = false, backward = false, optimizer = false;
  // The users of the buffer and of the views of it.
  SmallVector<Value> buffers = {alloc.getResult()};
  while (!buffers.empty()) {
    Value buffer = buffers.pop_back_val();
    for (Operation *user : buffer.getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == buffer)
          llvm::append_range(buffers, user->getResults());
      std::optional<Phase> phase = getAnnotatedPhase(user, body);
      if (!phase)
        continue;
      forward |= *phase == Phase::Forward;
      backward |= *phase == Phase::Backward;
      optimizer |= *phase == Phase::Optimizer;
    }
  }
  if (backward && optimizer)
    return Gradients;
  if (forward || backward)
    return Activations;
  return optimizer ? Other : Activations;
}

struct TagAllocationsPass
    : public mlir::zshard::impl::TagAllocationsBase<TagAllocationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::AllocOp> allocs;
    module.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    if (allocs.empty())
      return;
    Builder b(&getContext());
    func::FuncOp callee = getOrDeclareRuntimeFunction(
        module, kSetAllocCategoryFn, b.getFunctionType({b.getI32Type()}, {}));
    for (memref::AllocOp alloc : allocs) {
      Block *body = &alloc->getParentOfType<func::FuncOp>().front();
      Category category = categorize(alloc, body);
      numGradients += category == Gradients;
      numActivations += category == Activations;
      numOther += category == Other || category == Communication;
      OpBuilder builder(alloc);
      Value code = arith::ConstantIntOp::create(builder, alloc.getLoc(),
                                                builder.getI32Type(), int64_t(category));
      func::CallOp::create(builder, alloc.getLoc(), callee, code);
    }
  }
};

} // namespace
