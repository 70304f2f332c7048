//===- Microbatches.cpp - the microbatches of an accumulating step --------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/Microbatches.h"

#include "zshard/Analysis/ModulePaths.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::zshard;

StringRef mlir::zshard::stringifyMicrobatchGathers(MicrobatchGathers gathers) {
  switch (gathers) {
  case MicrobatchGathers::Regather:
    return "regather";
  case MicrobatchGathers::Keep:
    return "keep";
  }
  llvm_unreachable("unknown microbatch gathers");
}

/// The value of an i64 attribute, if `attr` is one.
static std::optional<int64_t> getI64(Attribute attr) {
  auto integer = dyn_cast_or_null<IntegerAttr>(attr);
  if (!integer || !integer.getType().isInteger(64))
    return std::nullopt;
  return integer.getInt();
}

int64_t mlir::zshard::getNumMicrobatches(func::FuncOp step) {
  std::optional<int64_t> count = getI64(step->getAttr(contract::kMicrobatches));
  return count && *count > 1 ? *count : 1;
}

std::optional<int64_t> mlir::zshard::getMicrobatch(Operation *op) {
  return getI64(op->getAttr(contract::kMicrobatch));
}

LogicalResult mlir::zshard::verifyMicrobatches(func::FuncOp step) {
  bool ok = true;
  int64_t count = 1;
  if (Attribute attr = step->getAttr(contract::kMicrobatches)) {
    std::optional<int64_t> value = getI64(attr);
    if (!value || *value < 2) {
      emitError(getReportLoc(step))
          << contract::kMicrobatches
          << " of the step must be an i64 of at least 2, got " << attr;
      ok = false;
    } else {
      count = *value;
    }
  }
  // Without the step's count, one error for all tagged ops.
  if (!step->hasAttr(contract::kMicrobatches)) {
    Operation *first = nullptr;
    unsigned tagged = 0;
    for (Operation &op : step.front())
      if (op.hasAttr(contract::kMicrobatch) && !tagged++)
        first = &op;
    if (!first)
      return success(ok);
    emitError(getReportLoc(first))
        << "op '" << first->getName() << "' (and " << tagged - 1
        << " other ops) has " << contract::kMicrobatch
        << " but the step has no " << contract::kMicrobatches;
    return failure();
  }
  for (Operation &op : step.front()) {
    Attribute attr = op.getAttr(contract::kMicrobatch);
    if (!attr)
      continue;
    std::optional<int64_t> value = getI64(attr);
    if (ok && (!value || *value < 0 || *value >= count)) {
      emitError(getReportLoc(&op))
          << contract::kMicrobatch << " of op '" << op.getName()
          << "' must be an i64 in [0, " << count << "), got " << attr;
      ok = false;
    }
  }
  return success(ok);
}
