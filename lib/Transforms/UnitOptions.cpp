//===- UnitOptions.cpp - Typed options of zshard-form-units ---------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Transforms/UnitOptions.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::zshard;

// In UnitFloatType's order; reduce-type takes all but the first.
static constexpr llvm::cl::OptionEnumValue kFloatTypeValues[] = {
    {"own", int(UnitFloatType::Own), "each buffer's own type"},
    {"f32", int(UnitFloatType::F32), "float32"},
    {"bf16", int(UnitFloatType::BF16), "bfloat16"},
    {"f16", int(UnitFloatType::F16), "float16"},
};

Type mlir::zshard::getUnitFloatType(MLIRContext *context, UnitFloatType type) {
  Builder builder(context);
  switch (type) {
  case UnitFloatType::Own:
    return Type();
  case UnitFloatType::F32:
    return builder.getF32Type();
  case UnitFloatType::BF16:
    return builder.getBF16Type();
  case UnitFloatType::F16:
    return builder.getF16Type();
  }
  llvm_unreachable("unknown unit float type");
}

EnumOptionValues mlir::zshard::getReduceTypeValues() {
  return {llvm::ArrayRef(kFloatTypeValues).drop_front()};
}

EnumOptionValues mlir::zshard::getBufferTypeValues() {
  return {kFloatTypeValues};
}
