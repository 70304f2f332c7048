//===- Reduce.cpp - Rank-order reduction of collective inputs -------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/Reduce.h"

#include "core/DType.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace zshard::rt;

namespace {

/// Elements per tile: small enough for the stack and the L1 cache.
constexpr int64_t tileSize = 512;

void loadTile(CommDType dtype, const void *src, int64_t n, float *out) {
  switch (dtype) {
  case CommDType::F32:
    std::memcpy(out, src, size_t(n) * sizeof(float));
    return;
  case CommDType::BF16: {
    const auto *bits = static_cast<const uint16_t *>(src);
    for (int64_t k = 0; k < n; ++k)
      out[k] = bf16ToFloat(bits[k]);
    return;
  }
  case CommDType::F16: {
    const auto *bits = static_cast<const uint16_t *>(src);
    for (int64_t k = 0; k < n; ++k)
      out[k] = halfToFloat(bits[k]);
    return;
  }
  case CommDType::I32:
    break;
  }
}

void storeTile(CommDType dtype, const float *in, int64_t n, void *dst) {
  switch (dtype) {
  case CommDType::F32:
    std::memcpy(dst, in, size_t(n) * sizeof(float));
    return;
  case CommDType::BF16: {
    auto *bits = static_cast<uint16_t *>(dst);
    for (int64_t k = 0; k < n; ++k)
      bits[k] = floatToBf16(in[k]);
    return;
  }
  case CommDType::F16: {
    auto *bits = static_cast<uint16_t *>(dst);
    for (int64_t k = 0; k < n; ++k)
      bits[k] = floatToHalf(in[k]);
    return;
  }
  case CommDType::I32:
    break;
  }
}

void reduceFloat(CommDType dtype, ReduceOp op, int groupSize,
                 const void *const *srcs, int numSrcs, void *const *dsts,
                 int numDsts, int64_t count) {
  const size_t elem = commDTypeSize(dtype);
  float acc[tileSize], next[tileSize];
  for (int64_t off = 0; off < count; off += tileSize) {
    int64_t n = std::min(tileSize, count - off);
    loadTile(dtype, static_cast<const char *>(srcs[0]) + off * elem, n, acc);
    for (int j = 1; j < numSrcs; ++j) {
      loadTile(dtype, static_cast<const char *>(srcs[j]) + off * elem, n, next);
      if (op == ReduceOp::Max) {
        // next wins when larger or NaN, unless acc already is NaN.
        for (int64_t k = 0; k < n; ++k)
          if (!std::isnan(acc[k]) && !(next[k] <= acc[k]))
            acc[k] = next[k];
      } else {
        for (int64_t k = 0; k < n; ++k)
          acc[k] += next[k];
      }
    }
    if (op == ReduceOp::Avg) {
      const float divisor = float(groupSize);
      for (int64_t k = 0; k < n; ++k)
        acc[k] /= divisor;
    }
    for (int d = 0; d < numDsts; ++d)
      storeTile(dtype, acc, n, static_cast<char *>(dsts[d]) + off * elem);
  }
}

void reduceInt(ReduceOp op, const void *const *srcs, int numSrcs,
               void *const *dsts, int numDsts, int64_t count) {
  int32_t acc[tileSize], next[tileSize];
  for (int64_t off = 0; off < count; off += tileSize) {
    int64_t n = std::min(tileSize, count - off);
    size_t bytes = size_t(n) * sizeof(int32_t);
    std::memcpy(acc, static_cast<const int32_t *>(srcs[0]) + off, bytes);
    for (int j = 1; j < numSrcs; ++j) {
      std::memcpy(next, static_cast<const int32_t *>(srcs[j]) + off, bytes);
      if (op == ReduceOp::Max) {
        for (int64_t k = 0; k < n; ++k)
          acc[k] = std::max(acc[k], next[k]);
      } else {
        // Wrap around on overflow, as two's complement hardware (and MPI) do.
        for (int64_t k = 0; k < n; ++k)
          acc[k] = int32_t(uint32_t(acc[k]) + uint32_t(next[k]));
      }
    }
    for (int d = 0; d < numDsts; ++d)
      std::memcpy(static_cast<int32_t *>(dsts[d]) + off, acc, bytes);
  }
}

} // namespace

void zshard::rt::reduceRankOrder(CommDType dtype, ReduceOp op, int groupSize,
                                 const void *const *srcs, int numSrcs,
                                 void *const *dsts, int numDsts,
                                 int64_t count) {
  if (count <= 0 || numSrcs <= 0)
    return;
  if (dtype == CommDType::I32)
    reduceInt(op, srcs, numSrcs, dsts, numDsts, count);
  else
    reduceFloat(dtype, op, groupSize, srcs, numSrcs, dsts, numDsts, count);
}
