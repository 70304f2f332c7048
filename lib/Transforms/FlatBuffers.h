//===- FlatBuffers.h - a unit's members in its flat buffer ------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Tensor-level helpers the sharding pass builds flat unit buffers with:
/// packing members into the padded buffer, slicing them back out, and
/// converting element types.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_TRANSFORMS_FLATBUFFERS_H
#define ZSHARD_LIB_TRANSFORMS_FLATBUFFERS_H

#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace zshard {

/// `member`'s slice of the flat buffer `flat`, in the member's shape.
Value extractMember(OpBuilder &builder, Location loc, Value flat,
                    MemberAttr member, Type elementType);

/// `value` (any shape) flattened to 1-D.
Value flatten(OpBuilder &builder, Location loc, Value value);

/// `value` with its elements converted to `element` (an arith cast on the
/// tensor; the lowering turns elementwise arith on tensors into linalg).
Value convertElements(OpBuilder &builder, Location loc, Value value,
                      Type element);

/// `value` (a tensor of floats) with its elements rounded to `element` and
/// back to their own type: unchanged when `element` holds every value of
/// that type, else a truncation and an extension (through f32 when neither
/// type holds the other, as bf16 and f16).
Value roundElements(OpBuilder &builder, Location loc, Value value,
                    FloatType element);

/// `values` (one per member, any shape) flattened into one zero-padded flat
/// buffer of `paddedSize` elements of `element`, each at its member's offset.
Value packMembers(OpBuilder &builder, Location loc, int64_t paddedSize,
                  ArrayRef<MemberAttr> members, ValueRange values,
                  Type element);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_LIB_TRANSFORMS_FLATBUFFERS_H
