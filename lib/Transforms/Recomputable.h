//===- Recomputable.h - Producers made cheap to compute again ---*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The patterns zshard-fuse-elementwise adds so that a cheap elementwise
/// producer (a log-softmax's `x - max - log(sum)`) can be computed again in
/// its consumers instead of written: the math of its broadcast inputs moved
/// into an op over those inputs' elements, and its elements read one by one
/// (`tensor.extract`, a cross-entropy's pick of the target's log
/// probability) computed from its inputs' elements.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_TRANSFORMS_RECOMPUTABLE_H
#define ZSHARD_LIB_TRANSFORMS_RECOMPUTABLE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::zshard {

/// The most body ops a producer computed again per consumer or per element
/// read may have.
constexpr unsigned kMaxRecomputedOps = 4;

/// Whether `op` is cheap to compute again where its result is read, in
/// place of a tensor written once: every loop parallel, on tensors, and a
/// body of at most kMaxRecomputedOps region-free arith ops.
bool isCheapToRecompute(linalg::GenericOp op);

/// Adds the two patterns (Recomputable.cpp says when each applies); both
/// compute every value bit for bit as before.
void populateRecomputablePatterns(RewritePatternSet &patterns);

} // namespace mlir::zshard

#endif // ZSHARD_LIB_TRANSFORMS_RECOMPUTABLE_H
