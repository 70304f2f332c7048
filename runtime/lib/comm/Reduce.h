//===- Reduce.h - Rank-order reduction of collective inputs -----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The one reduction kernel every backend uses where it reduces itself, so that
/// results are bitwise equal across ranks, runs and backends: each element is
/// combined in rank order, ((x0 op x1) op x2) ..., in f32 for the float types
/// (bf16 and f16 are widened exactly, rounded to nearest even once, on store)
/// and in i32 for i32 (sum wraps around). avg is the f32 sum divided by the
/// group size in f32. max keeps the earlier operand on ties and propagates
/// NaN.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_REDUCE_H
#define ZSHARD_RUNTIME_LIB_COMM_REDUCE_H

#include "comm/CommTypes.h"

#include <cstdint>

namespace zshard::rt {

/// For k in [0, count): r = srcs[0][k] op srcs[1][k] op ... srcs[n-1][k] in
/// that order (then / \p groupSize for avg), stored to dsts[d][k] for every
/// d < \p numDsts. Works in tiles, reading every source of a tile before
/// writing it, so a destination may be one of the sources (in place).
/// \p dtype must support \p op (see supportsReduction).
void reduceRankOrder(CommDType dtype, ReduceOp op, int groupSize,
                     const void *const *srcs, int numSrcs, void *const *dsts,
                     int numDsts, int64_t count);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_REDUCE_H
