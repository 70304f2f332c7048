//===- AbiTest.cpp - Tests of the headers shared with the compiler --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The init-spec grammar, strategies and memory categories of zshard/abi/,
// which the compiler and the runtime both use (the unit layout's tests are
// in UnitLayoutTest.cpp, FNV-1a's in PhiloxTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "zshard/abi/InitSpec.h"
#include "zshard/abi/MemoryCategory.h"
#include "zshard/abi/Strategy.h"
#include "zshard/abi/UnitLayout.h"
#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <string>

using namespace zshard_abi;

namespace {

std::string why(const char *text) {
  std::string problem;
  EXPECT_FALSE(InitSpec::parse(text, &problem)) << text;
  return problem;
}

// Tests that the canonical spelling reads back as the same spec, for the
// numbers the frontends write.
TEST(AbiTest, InitSpecSpellingRoundTrips) {
  for (const char *text :
       {"zeros", "ones", "param", "normal(0, 0.02)", "normal(-1, 0)",
        "uniform(-0.5, 0.5)", "normal(1e-05, 3.0000000000000004)",
        "uniform(-1e+300, 1e+300)"}) {
    std::optional<InitSpec> spec = InitSpec::parse(text);
    ASSERT_TRUE(spec) << text;
    std::optional<InitSpec> again = InitSpec::parse(spec->str());
    ASSERT_TRUE(again) << spec->str();
    EXPECT_EQ(again->kind, spec->kind);
    EXPECT_EQ(again->a, spec->a);
    EXPECT_EQ(again->b, spec->b);
  }
  EXPECT_EQ(InitSpec::parse("normal( 0 ,0.020 )")->str(), "normal(0, 0.02)");
  EXPECT_EQ(InitSpec::parse("uniform(+.5, 5.)")->str(), "uniform(0.5, 5)");
}

// Tests that the grammar is strict, with the problem and no prefix.
TEST(AbiTest, InitSpecProblems) {
  EXPECT_EQ(why(" zeros"), "expected normal(MEAN, STD), uniform(LOW, HIGH), "
                           "zeros, ones or param");
  EXPECT_EQ(why("normal(0)"), "expected ',' at offset 8");
  EXPECT_EQ(why("normal(inf, 1)"), "MEAN is not a decimal number at offset 7");
  EXPECT_EQ(why("uniform(0, 1e400)"), "HIGH 1e400 is out of range");
  EXPECT_EQ(why("normal(0, -1)"), "STD must be >= 0");
  EXPECT_EQ(why("uniform(2, 1)"), "LOW must be < HIGH");
  EXPECT_FALSE(InitSpec::parse("normal(0, 1)x"));
}

// Tests that the strategies' values are the dialect's (ZShardAttrs.td) and
// their names the manifest's.
TEST(AbiTest, Strategies) {
  const char *names[] = {"no_shard",   "zero1",        "shard_grad_op",
                         "full_shard", "hybrid_shard", "hybrid_shard_zero2"};
  int value = 0;
  for (Strategy strategy : kStrategies) {
    EXPECT_EQ(int(strategy), value);
    EXPECT_STREQ(strategyName(strategy), names[value]);
    EXPECT_EQ(parseStrategyName(names[value]), strategy);
    ++value;
  }
  EXPECT_FALSE(parseStrategyName("FULL_SHARD"));
  EXPECT_TRUE(isHybrid(Strategy::HybridShardZero2));
  EXPECT_FALSE(isHybrid(Strategy::FullShard));
}

// Tests that the runtime's C entry names the categories as the ABI does.
TEST(AbiTest, MemoryCategories) {
  for (int c = 0; c < kNumMemCategories; ++c)
    EXPECT_STREQ(zshard_rt_mem_category_name(zshard_rt_mem_category(c)),
                 memCategoryName(c));
  EXPECT_EQ(memCategoryName(kNumMemCategories), nullptr);
  EXPECT_FALSE(isDeviceMemCategory(ZSHARD_RT_MEM_HOST_OFFLOAD));
  EXPECT_TRUE(isDeviceMemCategory(ZSHARD_RT_MEM_COMMUNICATION));
}

// Tests the piece of a member a shard holds, which the runtime's shards and
// the compiler's layouts both cut with.
TEST(AbiTest, SliceOfShard) {
  // A member at [5, 15) and the shard [8, 12): elements [3, 7), at 0.
  MemberSlice inside = sliceOfShard(5, 10, {8, 12});
  EXPECT_EQ(inside.memberRange, (FlatRange{3, 7}));
  EXPECT_EQ(inside.shardOffset, 0);
  // The shard [0, 8): elements [0, 3), at 5.
  MemberSlice head = sliceOfShard(5, 10, {0, 8});
  EXPECT_EQ(head.memberRange, (FlatRange{0, 3}));
  EXPECT_EQ(head.shardOffset, 5);
  EXPECT_EQ(sliceOfShard(5, 10, {15, 20}).memberRange.size(), 0);
}

} // namespace
