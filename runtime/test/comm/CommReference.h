//===- CommReference.h - Inputs and reference of collectives ----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every rank's input is a pure function of (rank, element, salt), so any
/// process can compute every rank's input, and from it the expected result,
/// without communicating. The reference reduces one element at a time in rank
/// order with its own bf16 rounding (not the runtime's), so a backend must
/// match it bit for bit.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TEST_COMM_COMMREFERENCE_H
#define ZSHARD_RUNTIME_TEST_COMM_COMMREFERENCE_H

#include "comm/CommTypes.h"
#include "core/DType.h"

#include "zshard/abi/Fnv1a.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace zshard::rt::test {

using Bytes = std::vector<uint8_t>;

inline uint64_t splitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// FNV-1a 64 of \p size bytes at \p data.
inline uint64_t digest(const void *data, size_t size) {
  return zshard_abi::fnv1a64(data, size);
}
inline uint64_t digest(const Bytes &bytes) {
  return digest(bytes.data(), bytes.size());
}

inline uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// bf16 rounding to nearest even, written out independently of the runtime.
inline uint16_t referenceBf16(float value) {
  uint32_t bits = bitsOf(value);
  if (std::isnan(value))
    return uint16_t((bits >> 16) | 0x40);
  uint32_t lower = bits & 0xffff, upper = bits >> 16;
  if (lower > 0x8000 || (lower == 0x8000 && (upper & 1)))
    ++upper;
  return uint16_t(upper);
}

/// A float of varied sign and magnitude (2^-6 to 2^7), so sums in different
/// orders differ.
inline float randomFloat(uint64_t h) {
  float value = std::ldexp(1.0f + float(h & 0x7fffff) / 8388608.0f,
                           int((h >> 23) % 13) - 6);
  return (h >> 63) ? -value : value;
}

/// Element \p index of rank \p rank's input as stored bytes of \p dtype.
inline void storeInput(CommDType dtype, int rank, int64_t index, uint64_t salt,
                       uint8_t *out) {
  uint64_t h = splitMix(salt * 0x1000193ull ^
                        splitMix(uint64_t(rank) << 40 ^ uint64_t(index)));
  switch (dtype) {
  case CommDType::F32: {
    float value = randomFloat(h);
    std::memcpy(out, &value, 4);
    return;
  }
  case CommDType::BF16: {
    uint16_t bits = referenceBf16(randomFloat(h));
    std::memcpy(out, &bits, 2);
    return;
  }
  case CommDType::F16: {
    uint16_t bits = floatToHalf(randomFloat(h));
    std::memcpy(out, &bits, 2);
    return;
  }
  case CommDType::I32: {
    int32_t value = int32_t(int64_t(h % 2000001) - 1000000);
    std::memcpy(out, &value, 4);
    return;
  }
  }
}

/// Rank \p rank's input of \p count elements.
inline Bytes input(CommDType dtype, int rank, int64_t count, uint64_t salt) {
  const size_t elem = commDTypeSize(dtype);
  Bytes bytes(size_t(count) * elem);
  for (int64_t k = 0; k < count; ++k)
    storeInput(dtype, rank, k, salt, bytes.data() + size_t(k) * elem);
  return bytes;
}

inline float widen(CommDType dtype, const uint8_t *at) {
  uint16_t half;
  float value;
  switch (dtype) {
  case CommDType::F32:
    std::memcpy(&value, at, 4);
    return value;
  case CommDType::BF16:
    std::memcpy(&half, at, 2);
    return floatOf(uint32_t(half) << 16);
  case CommDType::F16:
    std::memcpy(&half, at, 2);
    return halfToFloat(half);
  case CommDType::I32:
    break;
  }
  return 0;
}

/// Elements [first, first + count) of the rank-order reduction of the inputs
/// of ranks 0..size-1 (each of at least first + count elements).
inline Bytes referenceReduce(CommDType dtype, ReduceOp op, int size,
                             int64_t first, int64_t count, uint64_t salt) {
  const size_t elem = commDTypeSize(dtype);
  Bytes result(size_t(count) * elem);
  uint8_t element[4];
  for (int64_t k = 0; k < count; ++k) {
    uint8_t *out = result.data() + size_t(k) * elem;
    if (dtype == CommDType::I32) {
      uint32_t acc = 0;
      int32_t best = 0;
      for (int j = 0; j < size; ++j) {
        storeInput(dtype, j, first + k, salt, element);
        int32_t value;
        std::memcpy(&value, element, 4);
        acc += uint32_t(value);
        best = (j == 0 || value > best) ? value : best;
      }
      int32_t value = op == ReduceOp::Max ? best : int32_t(acc);
      std::memcpy(out, &value, 4);
      continue;
    }
    float acc = 0;
    for (int j = 0; j < size; ++j) {
      storeInput(dtype, j, first + k, salt, element);
      float value = widen(dtype, element);
      if (j == 0)
        acc = value;
      else if (op == ReduceOp::Max)
        acc = std::isnan(acc) || value <= acc ? acc : value;
      else
        acc = acc + value;
    }
    if (op == ReduceOp::Avg)
      acc = acc / float(size);
    if (dtype == CommDType::F32) {
      std::memcpy(out, &acc, 4);
    } else {
      uint16_t bits =
          dtype == CommDType::BF16 ? referenceBf16(acc) : floatToHalf(acc);
      std::memcpy(out, &bits, 2);
    }
  }
  return result;
}

} // namespace zshard::rt::test

#endif // ZSHARD_RUNTIME_TEST_COMM_COMMREFERENCE_H
