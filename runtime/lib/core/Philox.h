//===- Philox.h - Counter-based random numbers ------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
/// 3", SC'11; the Random123 constants) and a random stream addressed by
/// element index. A value depends only on (key, stream, index), never on what
/// was drawn before, so any slice of a tensor can be drawn alone and equals
/// the same slice of the whole: every sharding and every rank count sees the
/// same numbers.
///
/// CounterRng(key, stream) draws element i from the Philox block at counter
/// (i mod 2^32, i >> 32, stream mod 2^32, stream >> 32) and key (key mod
/// 2^32, key >> 32):
///  - uniform(i) = w0 * 2^-32, in [0, 1);
///  - normal(i) = sqrt(-2 ln u1) * cos(2 pi u2) (Box-Muller) with
///    u1 = (w0 + 1) * 2^-32 in (0, 1] and u2 = w1 * 2^-32, in double;
///  - bits64(i) = w0 | w1 << 32.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CORE_PHILOX_H
#define ZSHARD_RUNTIME_LIB_CORE_PHILOX_H

#include <array>
#include <cstdint>

namespace zshard::rt {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// The Philox4x32 bijection with 10 rounds: four random words for a counter.
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

/// Random numbers addressed by a 64-bit element index, for one 64-bit key and
/// one 64-bit stream.
class CounterRng {
public:
  CounterRng(uint64_t key, uint64_t stream) : key(key), stream(stream) {}

  /// The four Philox words of element \p index.
  PhiloxCounter block(uint64_t index) const;

  /// Uniform in [0, 1), 32 random bits.
  double uniform(uint64_t index) const;

  /// Standard normal (Box-Muller, the cosine branch).
  double normal(uint64_t index) const;

  /// 64 random bits.
  uint64_t bits64(uint64_t index) const;

  /// Uniform integer in [0, n) (n > 0), from bits64 modulo n: the bias is at
  /// most n / 2^64.
  uint64_t below(uint64_t index, uint64_t n) const { return bits64(index) % n; }

private:
  uint64_t key;
  uint64_t stream;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CORE_PHILOX_H
