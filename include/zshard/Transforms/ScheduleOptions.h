//===- ScheduleOptions.h - Typed options of the schedule passes -*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Enums that zshard-prefetch takes as options (Passes.td) and the sharding
// pipeline and zshard-compile pass through unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TRANSFORMS_SCHEDULEOPTIONS_H
#define ZSHARD_TRANSFORMS_SCHEDULEOPTIONS_H

#include "zshard/Support/EnumOption.h"

namespace mlir::zshard {

/// When the next gather starts in backward (FSDP's `BackwardPrefetch`):
/// `pre` as soon as the current unit's gather is waited for, `post` after
/// the current unit's backward is done with it, `none` right before use.
enum class BackwardPrefetch { Pre, Post, None };

} // namespace mlir::zshard

ZSHARD_LISTING_ENUM_PARSER(mlir::zshard::BackwardPrefetch)

#endif // ZSHARD_TRANSFORMS_SCHEDULEOPTIONS_H
