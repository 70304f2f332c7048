//===- UnitOptions.h - Typed options of zshard-form-units -------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The wrap policy zshard-form-units takes as an option (Passes.td), which
// the sharding pipeline and zshard-compile pass through unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TRANSFORMS_UNITOPTIONS_H
#define ZSHARD_TRANSFORMS_UNITOPTIONS_H

namespace mlir::zshard {

/// How parameters are grouped into units: FSDP's
/// `transformer_auto_wrap_policy` (one unit per module matching a pattern
/// or of a layer class), `size_based_auto_wrap_policy` (units closed at a
/// parameter count), or units listed by name.
enum class WrapPolicy { Transformer, Size, Explicit };

} // namespace mlir::zshard

#endif // ZSHARD_TRANSFORMS_UNITOPTIONS_H
