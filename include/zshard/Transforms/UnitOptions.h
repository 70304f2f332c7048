//===- UnitOptions.h - Typed options of zshard-form-units -------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The wrap policy and the element types zshard-form-units takes as options
// (Passes.td), which the sharding pipeline and zshard-compile pass through
// unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TRANSFORMS_UNITOPTIONS_H
#define ZSHARD_TRANSFORMS_UNITOPTIONS_H

#include "zshard/Support/EnumOption.h"

namespace mlir {
class MLIRContext;
class Type;
} // namespace mlir

namespace mlir::zshard {

/// How parameters are grouped into units: FSDP's
/// `transformer_auto_wrap_policy` (one unit per module matching a pattern
/// or of a layer class), `size_based_auto_wrap_policy` (units closed at a
/// parameter count), or units listed by name.
enum class WrapPolicy { Transformer, Size, Explicit };

/// The element type a unit reduces its gradients in (`reduce-type`, FSDP's
/// MixedPrecision reduce_dtype) or computes its buffers with
/// (`buffer-type`, buffer_dtype). `Own` is buffer-type's default: each
/// buffer keeps its own type.
enum class UnitFloatType { Own, F32, BF16, F16 };

/// The MLIR type of `type` (null for `Own`).
Type getUnitFloatType(MLIRContext *context, UnitFloatType type);

/// The values reduce-type takes (`f32`, `bf16`, `f16`), and those of
/// buffer-type and zshard-compile's --buffer-dtype (the same and `own`).
EnumOptionValues getReduceTypeValues();
EnumOptionValues getBufferTypeValues();

} // namespace mlir::zshard

ZSHARD_LISTING_ENUM_PARSER(mlir::zshard::WrapPolicy)
ZSHARD_LISTING_ENUM_PARSER(mlir::zshard::UnitFloatType)

#endif // ZSHARD_TRANSFORMS_UNITOPTIONS_H
