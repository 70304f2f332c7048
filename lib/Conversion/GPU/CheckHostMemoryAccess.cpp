//===- CheckHostMemoryAccess.cpp - --zshard-check-host-memory-access ------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reports every op outside a gpu.module that reads or writes a memref: on
/// the CUDA target all buffers are device memory, and a host access would
/// crash the compiled step.
///
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_CHECKHOSTMEMORYACCESS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

/// The memref `op` reads or writes, if any: a value of memref type named by
/// one of its read or write effects.
std::optional<Value> getAccessedMemRef(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return std::nullopt;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (const MemoryEffects::EffectInstance &effect : instances) {
    if (!isa<MemoryEffects::Read, MemoryEffects::Write>(effect.getEffect()))
      continue;
    Value value = effect.getValue();
    if (value && isa<BaseMemRefType>(value.getType()))
      return value;
  }
  return std::nullopt;
}

struct CheckHostMemoryAccessPass
    : public mlir::zshard::impl::CheckHostMemoryAccessBase<
          CheckHostMemoryAccessPass> {
  void runOnOperation() override {
    bool failedCheck = false;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      if (isa<gpu::GPUDialect>(op->getDialect()))
        return WalkResult::advance();
      if (std::optional<Value> memref = getAccessedMemRef(op)) {
        ++numHostAccesses;
        failedCheck = true;
        op->emitError() << "'" << op->getName()
                        << "' would access device memory from the host ("
                        << memref->getType()
                        << "); on the CUDA target every memory access "
                           "must be in a kernel";
        // Report the op, not each access nested in it.
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    if (failedCheck)
      signalPassFailure();
  }
};

} // namespace
