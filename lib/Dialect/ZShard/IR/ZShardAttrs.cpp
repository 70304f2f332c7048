//===- ZShardAttrs.cpp - zshard attributes and enums ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"

#include "mlir/IR/Builders.h"
#include "zshard/Dialect/ZShard/IR/ZShardDialect.h"
#include "zshard/Dialect/ZShard/IR/ZShardPrinting.h"
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
