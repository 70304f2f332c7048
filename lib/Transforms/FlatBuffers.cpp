//===- FlatBuffers.cpp - a unit's members in its flat buffer --------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "FlatBuffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::zshard;

/// `member`'s slice of the flat buffer `flat`, in the member's shape.
Value zshard::extractMember(OpBuilder &builder, Location loc, Value flat,
                            MemberAttr member, Type elementType) {
  int64_t n = member.getNumElements();
  auto flatType = RankedTensorType::get({n}, elementType);
  Value slice = tensor::ExtractSliceOp::create(
      builder, loc, flatType, flat, ValueRange{}, ValueRange{}, ValueRange{},
      builder.getDenseI64ArrayAttr({member.getOffset()}),
      builder.getDenseI64ArrayAttr({n}), builder.getDenseI64ArrayAttr({1}));
  ArrayRef<int64_t> shape = member.getShape();
  if (shape.size() == 1)
    return slice;
  SmallVector<ReassociationIndices> all(1);
  for (unsigned d = 0; d < shape.size(); ++d)
    all[0].push_back(d);
  return tensor::ExpandShapeOp::create(
      builder, loc, RankedTensorType::get(shape, elementType), slice, all);
}

/// `value` (any shape) flattened to 1-D.
Value zshard::flatten(OpBuilder &builder, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  SmallVector<ReassociationIndices> all(1);
  for (unsigned d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  return tensor::CollapseShapeOp::create(builder, loc, value, all);
}

/// `value` with its elements converted to `element` (an arith cast on the
/// tensor; the lowering turns elementwise arith on tensors into linalg).
Value zshard::convertElements(OpBuilder &builder, Location loc, Value value,
                              Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  Type from = type.getElementType();
  if (from == element)
    return value;
  auto to = type.clone(element);
  if (from.getIntOrFloatBitWidth() < element.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(builder, loc, to, value);
  return arith::TruncFOp::create(builder, loc, to, value);
}

Value zshard::roundElements(OpBuilder &builder, Location loc, Value value,
                            FloatType element) {
  auto own = cast<FloatType>(getElementTypeOrSelf(value.getType()));
  const llvm::fltSemantics &from = own.getFloatSemantics();
  const llvm::fltSemantics &to = element.getFloatSemantics();
  if (llvm::APFloatBase::isRepresentableBy(from, to))
    return value;
  // A type that holds both: the buffer's own, or f32 for bf16 and f16.
  FloatType wide = llvm::APFloatBase::isRepresentableBy(to, from)
                       ? own
                       : builder.getF32Type();
  Value rounded = convertElements(
      builder, loc, convertElements(builder, loc, value, wide), element);
  return convertElements(builder, loc,
                         convertElements(builder, loc, rounded, wide), own);
}

/// The members' values (from `valueOf`) flattened into one zero-padded flat
/// buffer of the unit's padded size.
Value zshard::packMembers(OpBuilder &builder, Location loc, int64_t paddedSize,
                          ArrayRef<MemberAttr> members, ValueRange values,
                          Type element) {
  auto flatType = RankedTensorType::get({paddedSize}, element);
  Value zero =
      arith::ConstantOp::create(builder, loc, builder.getZeroAttr(element));
  Value flat =
      tensor::EmptyOp::create(builder, loc, flatType.getShape(), element);
  flat = linalg::FillOp::create(builder, loc, zero, flat).getResult(0);
  for (auto [member, raw] : llvm::zip(members, values)) {
    Value value =
        convertElements(builder, loc, flatten(builder, loc, raw), element);
    int64_t n = member.getNumElements();
    flat = tensor::InsertSliceOp::create(
        builder, loc, value, flat, ValueRange{}, ValueRange{}, ValueRange{},
        builder.getDenseI64ArrayAttr({member.getOffset()}),
        builder.getDenseI64ArrayAttr({n}), builder.getDenseI64ArrayAttr({1}));
  }
  return flat;
}
