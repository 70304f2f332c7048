//===- OneHotSums.h - Sums over one-hot tensors, folded ---------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pattern zshard-fuse-elementwise adds for the row sums of one-hot
/// tensors (a cross-entropy backward's: the gradient of the picked log
/// probability, one nonzero a row, summed by the log-softmax's backward).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_TRANSFORMS_ONEHOTSUMS_H
#define ZSHARD_LIB_TRANSFORMS_ONEHOTSUMS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::zshard {

/// Adds the pattern that computes a sum over one dimension of a one-hot
/// linalg.generic from the one element that can be nonzero, bit for bit the
/// sum the reduction computed (OneHotSums.cpp says when that holds).
void populateFoldOneHotSumPatterns(RewritePatternSet &patterns);

} // namespace mlir::zshard

#endif // ZSHARD_LIB_TRANSFORMS_ONEHOTSUMS_H
