//===- ColumnSums.h - Column sums computed by their producer ----*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pattern zshard-fuse-elementwise adds for the column sums of an
/// elementwise op's result that other ops read too (a Linear's bias
/// gradient: the sum over the tokens of the gradient of its output, which
/// its two matrix products read as well).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_TRANSFORMS_COLUMNSUMS_H
#define ZSHARD_LIB_TRANSFORMS_COLUMNSUMS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::zshard {

/// Adds the pattern that computes a column sum of an elementwise
/// linalg.generic's result in that generic, as a second result, bit for bit
/// the sum the reduction computed (ColumnSums.cpp says when it applies).
void populateFuseColumnSumPatterns(RewritePatternSet &patterns);

} // namespace mlir::zshard

#endif // ZSHARD_LIB_TRANSFORMS_COLUMNSUMS_H
