//===- PhiloxTest.cpp - Tests of the counter-based RNG --------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/Philox.h"
#include "zshard/abi/Fnv1a.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace zshard::rt;
using zshard_abi::fnv1a64;
using zshard_abi::hex16;

// Tests Philox4x32-10 against the known-answer vectors of Random123
// (kat_vectors: philox4x32 10).
TEST(PhiloxTest, KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// Tests FNV-1a 64 against published values and the signature example.
TEST(PhiloxTest, Fnv1a) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(hex16(fnv1a64("param:w:f32:4x2;->loss::f32:;")),
            "95b96f14decaba53");
  EXPECT_EQ(hex16(0xabc), "0000000000000abc");
}

// Tests how element index, key and stream map onto the Philox counter and
// key words.
TEST(PhiloxTest, CounterLayout) {
  uint64_t key = 0x0123456789abcdefull, stream = 0xfedcba9876543210ull;
  uint64_t index = 0x1122334455667788ull;
  CounterRng rng(key, stream);
  PhiloxCounter want =
      philox4x32_10({0x55667788, 0x11223344, 0x76543210, 0xfedcba98},
                    {0x89abcdef, 0x01234567});
  EXPECT_EQ(rng.block(index), want);
  EXPECT_EQ(rng.uniform(index), want[0] / 4294967296.0);
  EXPECT_EQ(rng.bits64(index), uint64_t(want[0]) | uint64_t(want[1]) << 32);
}

// Tests rough statistics: uniform in [0, 1) with mean 1/2, normal with mean 0
// and variance 1, and below(n) covering [0, n).
TEST(PhiloxTest, Distributions) {
  CounterRng rng(fnv1a64("stats"), 3);
  const int n = 200000;
  double sum = 0, sumSq = 0, uSum = 0;
  for (int i = 0; i < n; ++i) {
    double u = rng.uniform(i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    uSum += u;
    double z = rng.normal(i);
    ASSERT_TRUE(std::isfinite(z));
    sum += z;
    sumSq += z * z;
  }
  EXPECT_NEAR(uSum / n, 0.5, 0.005);
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sumSq / n, 1.0, 0.02);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    uint64_t v = rng.below(i, 7);
    ASSERT_LT(v, 7u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
}

// Tests that different keys and streams give different numbers.
TEST(PhiloxTest, KeysAndStreamsDiffer) {
  EXPECT_NE(CounterRng(1, 0).bits64(0), CounterRng(2, 0).bits64(0));
  EXPECT_NE(CounterRng(1, 0).bits64(0), CounterRng(1, 1).bits64(0));
  EXPECT_NE(CounterRng(1, 0).bits64(0), CounterRng(1, 0).bits64(1));
  EXPECT_EQ(CounterRng(1, 5).bits64(9), CounterRng(1, 5).bits64(9));
}
