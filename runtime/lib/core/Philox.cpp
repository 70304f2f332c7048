//===- Philox.cpp - Counter-based random numbers --------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/Philox.h"

#include <cmath>

using namespace zshard::rt;

namespace {

constexpr uint32_t philoxM0 = 0xD2511F53u;
constexpr uint32_t philoxM1 = 0xCD9E8D57u;
constexpr uint32_t philoxW0 = 0x9E3779B9u; // golden ratio
constexpr uint32_t philoxW1 = 0xBB67AE85u; // sqrt(3) - 1

constexpr double twoToMinus32 = 1.0 / 4294967296.0;
constexpr double twoPi = 6.283185307179586476925286766559;

} // namespace

PhiloxCounter zshard::rt::philox4x32_10(PhiloxCounter ctr, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += philoxW0;
      key[1] += philoxW1;
    }
    uint64_t p0 = uint64_t(philoxM0) * ctr[0];
    uint64_t p1 = uint64_t(philoxM1) * ctr[2];
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
  }
  return ctr;
}

PhiloxCounter CounterRng::block(uint64_t index) const {
  return philox4x32_10({uint32_t(index), uint32_t(index >> 32),
                        uint32_t(stream), uint32_t(stream >> 32)},
                       {uint32_t(key), uint32_t(key >> 32)});
}

double CounterRng::uniform(uint64_t index) const {
  return block(index)[0] * twoToMinus32;
}

double CounterRng::normal(uint64_t index) const {
  PhiloxCounter w = block(index);
  double u1 = (double(w[0]) + 1.0) * twoToMinus32;
  double u2 = double(w[1]) * twoToMinus32;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(twoPi * u2);
}

uint64_t CounterRng::bits64(uint64_t index) const {
  PhiloxCounter w = block(index);
  return uint64_t(w[0]) | uint64_t(w[1]) << 32;
}
