//===- BufferUses.h - Where a buffer is touched in a block ------*- C++ -*-===//
//
// Part of the zshard project.
//
// The ops of a straight-line block that may touch a buffer: those that use
// it or any value derived from it (views, casts, the pointer handed to a
// runtime call, the handle an asynchronous collective returns), each
// counted as the top-level op of the block it is nested in.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_CONVERSION_BUFFERUSES_H
#define ZSHARD_LIB_CONVERSION_BUFFERUSES_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::zshard {

/// Numbers the ops of a block in order.
using BlockPositions = llvm::DenseMap<Operation *, unsigned>;
BlockPositions numberOps(Block &block);

/// The top-level ops of `block` that touch `buffer` (uses of it and,
/// transitively, of every result of a user), in no particular order and
/// without duplicates. Users in `ignore` are skipped (their results are not
/// followed).
SmallVector<Operation *> touchingOps(Value buffer, Block &block,
                                     llvm::ArrayRef<Operation *> ignore = {});

/// The last op of `block` that touches `buffer`, apart from `ignore`; the
/// buffer's defining op (or null for a block argument) when none does.
Operation *lastTouch(Value buffer, Block &block, const BlockPositions &position,
                     llvm::ArrayRef<Operation *> ignore = {});

} // namespace mlir::zshard

#endif // ZSHARD_LIB_CONVERSION_BUFFERUSES_H
