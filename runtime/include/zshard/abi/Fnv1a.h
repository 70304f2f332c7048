//===- Fnv1a.h - 64-bit FNV-1a hashing --------------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3),
/// over bytes. It gives an artifact its signature (the compiler writes it,
/// the runtime recomputes it), keys the initialisation RNG by tensor name
/// and checksums checkpoints, so compiler and runtime share this one
/// definition.
///
/// Header-only C++17 with no LLVM or MLIR dependency.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ABI_FNV1A_H
#define ZSHARD_ABI_FNV1A_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zshard_abi {

inline constexpr uint64_t fnv1aOffsetBasis = 0xcbf29ce484222325ull;
inline constexpr uint64_t fnv1aPrime = 0x100000001b3ull;

/// Continues the FNV-1a hash \p hash over \p size bytes at \p data.
inline uint64_t fnv1a64(const void *data, size_t size,
                        uint64_t hash = fnv1aOffsetBasis) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= fnv1aPrime;
  }
  return hash;
}

/// FNV-1a of the bytes of \p text (UTF-8 as stored).
inline uint64_t fnv1a64(std::string_view text,
                        uint64_t hash = fnv1aOffsetBasis) {
  return fnv1a64(text.data(), text.size(), hash);
}

/// Continues \p hash over the 8 little-endian bytes of \p value.
inline uint64_t fnv1a64Word(uint64_t value, uint64_t hash) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<unsigned char>(value >> (8 * i));
  return fnv1a64(bytes, sizeof(bytes), hash);
}

/// \p value as 16 lower-case hex digits.
inline std::string hex16(uint64_t value) {
  static const char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4)
    out[size_t(i)] = digits[value & 0xf];
  return out;
}

} // namespace zshard_abi

#endif // ZSHARD_ABI_FNV1A_H
