//===- RowReduction.h - Row reductions on memrefs ---------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The row reductions zshard-split-reductions and
// zshard-interleave-reductions rewrite into loops, and the pieces of those
// loops they share: a linalg.generic on memrefs whose innermost loop is its
// only reduction, into one float output, combined by one binary op.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_CONVERSION_BUFFERIZED_ROWREDUCTION_H
#define ZSHARD_CONVERSION_BUFFERIZED_ROWREDUCTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::zshard {

/// A generic whose innermost loop reduces into its one output `acc` by
/// `combiner` (`acc <op> reduced` or `reduced <op> acc`, yielded), where
/// `reduced` is computed from the inputs and loop indices alone by
/// `bodyOps` pure, region-free ops.
struct RowReduction {
  linalg::GenericOp op;
  Operation *combiner;
  Value reduced;
  unsigned bodyOps;
};

/// `op` as a row reduction, if it is one: static loop ranges, every loop
/// parallel but the innermost, a float memref output whose indexing map does
/// not use the reduced dimension and that no input aliases by value, and an
/// accumulator the combiner alone reads.
std::optional<RowReduction> matchRowReduction(linalg::GenericOp op);

/// A stack buffer of `size` values of `element` at the entry of the function
/// holding `r`, out of every loop; null outside a function body.
Value createEntryBuffer(const RowReduction &r, int64_t size, Type element);

/// Builds, at `b`'s insertion point, one scf.for from `zero` to its extent
/// (step `one`; `innermostStep` for the innermost, when given) per parallel
/// loop of `r`, outermost first, and leaves `b` at the start of the
/// innermost; returns their induction variables.
SmallVector<Value> buildRowLoops(OpBuilder &b, const RowReduction &r,
                                 Value zero, Value one,
                                 Value innermostStep = {});

/// The indices `map` gives for the loop indices `dims`, as affine.apply ops.
SmallVector<Value> applyIndexingMap(OpBuilder &b, Location loc, AffineMap map,
                                    ArrayRef<Value> dims);

/// Emits, at `b`'s insertion point, the body of `r` at the loop indices
/// `dims` without its combiner: loads of the memref inputs, scalar inputs
/// as they are, `linalg.index` as the index. Returns the reduced value.
Value emitReducedValue(OpBuilder &b, const RowReduction &r,
                       ArrayRef<Value> dims);

/// Emits `r`'s combiner on `acc` and `value` at `b`'s insertion point.
Value emitCombine(OpBuilder &b, const RowReduction &r, Value acc, Value value);

} // namespace mlir::zshard

#endif // ZSHARD_CONVERSION_BUFFERIZED_ROWREDUCTION_H
