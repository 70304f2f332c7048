//===- TypeBytes.cpp - Bytes of elements, tensors and memrefs -------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Support/TypeBytes.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

int64_t zshard::getElementBytes(Type type) {
  if (type.isIntOrFloat())
    return (int64_t(type.getIntOrFloatBitWidth()) + 7) / 8;
  return 8;
}

std::optional<int64_t> zshard::getStaticBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return std::nullopt;
  return shaped.getNumElements() * getElementBytes(shaped.getElementType());
}
