//===- ZShardAttrs.cpp - zshard attributes and enums ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"

#include "mlir/IR/Builders.h"
#include "zshard/Dialect/ZShard/IR/ZShardDialect.h"
#include "zshard/Dialect/ZShard/IR/ZShardPrinting.h"
#include "zshard/abi/InitSpec.h"
#include "zshard/abi/Roles.h"
#include "zshard/abi/UnitLayout.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zshard;

#include "zshard/Dialect/ZShard/IR/ZShardEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.cpp.inc"

void ZShardDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.cpp.inc"
      >();
}

LogicalResult MemberAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, ArrayRef<int64_t> shape,
                                 int64_t offset) {
  if (name.empty())
    return emitError() << "unit member needs a non-empty name";
  if (offset < 0)
    return emitError() << "unit member '" << name << "' has negative offset "
                       << offset;
  if (!::zshard_abi::checkedNumElements(
          std::vector<int64_t>(shape.begin(), shape.end())))
    return emitError() << "unit member '" << name
                       << "' has a negative extent or too many elements";
  return success();
}

int64_t MemberAttr::getNumElements() const {
  ArrayRef<int64_t> shape = getShape();
  return ::zshard_abi::checkedNumElements(
             std::vector<int64_t>(shape.begin(), shape.end()))
      .value_or(0);
}

//===----------------------------------------------------------------------===//
// Step ABI
//===----------------------------------------------------------------------===//

/// Fails unless every element of `array` is a `T`, naming `what`.
template <typename T>
static LogicalResult checkElements(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayAttr array, StringRef what) {
  for (auto [i, element] : llvm::enumerate(array))
    if (!isa<T>(element))
      return emitError() << what << " #" << i << " is " << element
                         << ", not a #zshard." << T::getMnemonic();
  return success();
}

LogicalResult
ABIArgumentAttr::verify(function_ref<InFlightDiagnostic()> emitError, Role role,
                        StringRef name, RankedTensorType type, InitAttr init,
                        StringRef param, StringRef unit, StringRef slot,
                        ArgPlacement placement, BoolAttr persistent,
                        FloatAttr recorded) {
  if (!isArgumentRole(role))
    return emitError() << "abi_argument has the result role '"
                       << stringifyRole(role) << "'";
  if (name.empty())
    return emitError() << "abi_argument (" << stringifyRole(role)
                       << ") needs a non-empty name";
  return success();
}

LogicalResult
ABIResultAttr::verify(function_ref<InFlightDiagnostic()> emitError, Role role,
                      StringRef name, RankedTensorType type, StringRef unit,
                      StringRef slot, BoolAttr inPlace) {
  if (isArgumentRole(role))
    return emitError() << "abi_result has the argument role '"
                       << stringifyRole(role) << "'";
  return success();
}

LogicalResult ABISlotAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef slot, Type type, ArrayAttr inits) {
  if (slot.empty())
    return emitError() << "abi_slot needs a non-empty slot name";
  return checkElements<InitAttr>(emitError, inits, "abi_slot init");
}

LogicalResult ABIUnitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef name, Strategy strategy,
                                  DenseI64ArrayAttr shardAxes,
                                  DenseI64ArrayAttr replicateAxes,
                                  int64_t padded, int64_t shardSize,
                                  Type paramType, Type reduceType,
                                  Type bufferType, ArrayAttr members,
                                  ArrayAttr inits, ArrayAttr slots) {
  if (name.empty())
    return emitError() << "abi_unit needs a non-empty name";
  if (failed(
          checkElements<MemberAttr>(emitError, members, "abi_unit member")) ||
      failed(checkElements<InitAttr>(emitError, inits, "abi_unit init")) ||
      failed(checkElements<ABISlotAttr>(emitError, slots, "abi_unit slot")))
    return failure();
  if (inits.size() != members.size())
    return emitError() << "abi_unit '" << name << "' has " << members.size()
                       << " members but " << inits.size() << " inits";
  return success();
}

LogicalResult StepABIAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef step, ArrayAttr arguments,
                                  ArrayAttr results, ArrayAttr units,
                                  StringRef grid, DenseI64ArrayAttr gridShape,
                                  int64_t ranks, DictionaryAttr moduleAttrs,
                                  StepTarget target, StringRef chip,
                                  IntegerAttr peakBytes) {
  if (step.empty())
    return emitError() << "step_abi needs the name of its step";
  if (failed(checkElements<ABIArgumentAttr>(emitError, arguments,
                                            "step_abi argument")) ||
      failed(checkElements<ABIResultAttr>(emitError, results,
                                          "step_abi result")) ||
      failed(checkElements<ABIUnitAttr>(emitError, units, "step_abi unit")))
    return failure();
  if (ranks < 1)
    return emitError() << "step_abi needs at least one rank, got " << ranks;
  if (!chip.empty() && target != StepTarget::CUDA)
    return emitError() << "step_abi has a chip ('" << chip
                       << "') but its target is not cuda";
  return success();
}

StepABIAttr StepABIAttr::withResults(ArrayRef<Attribute> results) const {
  return get(getContext(), getStep(), getArguments(),
             ArrayAttr::get(getContext(), results), getUnits(), getGrid(),
             getGridShape(), getRanks(), getModuleAttrs(), getTarget(),
             getChip(), getPeakBytes());
}

StepABIAttr StepABIAttr::withPeakBytes(int64_t bytes) const {
  return get(getContext(), getStep(), getArguments(), getResults(), getUnits(),
             getGrid(), getGridShape(), getRanks(), getModuleAttrs(),
             getTarget(), getChip(),
             IntegerAttr::get(IntegerType::get(getContext(), 64), bytes));
}
