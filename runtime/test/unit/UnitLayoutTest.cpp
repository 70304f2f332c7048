//===- UnitLayoutTest.cpp - unit layout arithmetic ------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "zshard/abi/UnitLayout.h"

#include "gtest/gtest.h"

#include <limits>

using namespace zshard_abi;

namespace {

TEST(UnitLayout, CheckedNumElements) {
  EXPECT_EQ(checkedNumElements({}), 1);
  EXPECT_EQ(checkedNumElements({3, 5}), 15);
  EXPECT_EQ(checkedNumElements({3, 0, 5}), 0);
  EXPECT_EQ(checkedNumElements({-1, 4}), std::nullopt);
  int64_t big = int64_t(1) << 40;
  EXPECT_EQ(checkedNumElements({big, big}), std::nullopt);
}

TEST(UnitLayout, RoundUp) {
  EXPECT_EQ(roundUpToMultiple(0, 4), 0);
  EXPECT_EQ(roundUpToMultiple(1, 4), 4);
  EXPECT_EQ(roundUpToMultiple(8, 4), 8);
  EXPECT_EQ(roundUpToMultiple(9, 3), 9);
  EXPECT_EQ(roundUpToMultiple(10, 3), 12);
  EXPECT_EQ(roundUpToMultiple(5, 0), std::nullopt);
  EXPECT_EQ(roundUpToMultiple(-1, 4), std::nullopt);
  EXPECT_EQ(roundUpToMultiple(std::numeric_limits<int64_t>::max(), 2),
            std::nullopt);
}

TEST(UnitLayout, ContiguousOffsetsAndPadding) {
  // 7 + 3x5 + 2 = 24 elements; 5 ranks pad to 25.
  auto layout = UnitLayout::create({{"a", {7}}, {"b", {3, 5}}, {"c", {2}}},
                                   /*groupSize=*/5);
  ASSERT_TRUE(layout);
  const auto &members = layout->getMembers();
  ASSERT_EQ(members.size(), 3u);
  EXPECT_EQ(members[0].offset, 0);
  EXPECT_EQ(members[1].offset, 7);
  EXPECT_EQ(members[2].offset, 22);
  EXPECT_EQ(members[1].numElements, 15);
  EXPECT_EQ(layout->getExtent(), 24);
  EXPECT_EQ(layout->getPaddedSize(), 25);
  EXPECT_EQ(layout->getShardSize(), 5);
  EXPECT_EQ(layout->getPaddingElements(), 1);
}

TEST(UnitLayout, AlignmentLeavesGaps) {
  auto layout = UnitLayout::create({{"a", {3}}, {"b", {5}}, {"c", {1}}},
                                   /*groupSize=*/4, /*alignment=*/4);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->getMembers()[1].offset, 4);
  EXPECT_EQ(layout->getMembers()[2].offset, 12);
  EXPECT_EQ(layout->getExtent(), 13);
  EXPECT_EQ(layout->getPaddedSize(), 16);
  EXPECT_EQ(layout->getPaddingElements(), 16 - 9);
}

TEST(UnitLayout, ShardRangesTileThePaddedBuffer) {
  for (int64_t group : {1, 2, 3, 4, 7, 8}) {
    auto layout = UnitLayout::create({{"w", {11, 3}}, {"b", {5}}}, group);
    ASSERT_TRUE(layout) << group;
    int64_t next = 0;
    for (int64_t rank = 0; rank < group; ++rank) {
      FlatRange range = layout->getShardRange(rank);
      EXPECT_EQ(range.begin, next) << "group " << group << " rank " << rank;
      EXPECT_EQ(range.size(), layout->getShardSize());
      next = range.end;
    }
    EXPECT_EQ(next, layout->getPaddedSize());
    EXPECT_EQ(layout->getPaddedSize() % group, 0);
    EXPECT_LT(layout->getPaddedSize() - layout->getExtent(), group);
  }
}

// Every element of every member is held by exactly one rank, at the shard
// offset the slices say, for odd sizes and 3 ranks.
TEST(UnitLayout, SlicesCoverEveryMemberExactlyOnce) {
  std::vector<MemberSpec> specs = {
      {"x", {7}}, {"y", {2, 3}}, {"z", {}}, {"empty", {0}}, {"w", {5}}};
  for (int64_t group : {1, 2, 3, 5, 6, 19, 20}) {
    auto layout = UnitLayout::create(specs, group, /*alignment=*/2);
    ASSERT_TRUE(layout);
    std::vector<std::vector<int>> seen;
    for (const MemberLayout &m : layout->getMembers())
      seen.emplace_back(m.numElements, 0);
    for (int64_t rank = 0; rank < group; ++rank) {
      FlatRange shard = layout->getShardRange(rank);
      int64_t lastShardOffset = -1;
      for (const MemberSlice &slice : layout->getShardSlices(rank)) {
        const MemberLayout &m = layout->getMembers()[slice.member];
        EXPECT_GT(slice.memberRange.size(), 0);
        EXPECT_GT(slice.shardOffset, lastShardOffset);
        lastShardOffset = slice.shardOffset;
        // The flat position matches the member's offset.
        EXPECT_EQ(shard.begin + slice.shardOffset,
                  m.offset + slice.memberRange.begin);
        EXPECT_LE(slice.shardOffset + slice.memberRange.size(),
                  layout->getShardSize());
        for (int64_t e = slice.memberRange.begin; e < slice.memberRange.end;
             ++e)
          ++seen[slice.member][e];
      }
    }
    for (size_t i = 0; i < seen.size(); ++i)
      for (int count : seen[i])
        EXPECT_EQ(count, 1) << "member " << i << " group " << group;
  }
}

TEST(UnitLayout, SliceSplitsAMemberAcrossRanks) {
  // 10 elements over 3 ranks: padded 12, shards [0,4) [4,8) [8,12).
  auto layout = UnitLayout::create({{"a", {10}}}, 3);
  ASSERT_TRUE(layout);
  auto r1 = layout->getShardSlices(1);
  ASSERT_EQ(r1.size(), 1u);
  EXPECT_EQ(r1[0].memberRange, (FlatRange{4, 8}));
  auto r2 = layout->getShardSlices(2);
  ASSERT_EQ(r2.size(), 1u);
  EXPECT_EQ(r2[0].memberRange, (FlatRange{8, 10}));
  EXPECT_EQ(r2[0].shardOffset, 0);
}

TEST(UnitLayout, RankHoldingOnlyPaddingHasNoSlices) {
  // 2 elements over 4 ranks: ranks 2 and 3 hold padding only.
  auto layout = UnitLayout::create({{"a", {2}}}, 4);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->getShardSize(), 1);
  EXPECT_TRUE(layout->getShardSlices(2).empty());
  EXPECT_TRUE(layout->getShardSlices(3).empty());
}

TEST(UnitLayout, RejectsBadInput) {
  std::string error;
  EXPECT_FALSE(UnitLayout::create({}, 2, 1, &error));
  EXPECT_EQ(error, "a unit needs at least one member");
  EXPECT_FALSE(UnitLayout::create({{"a", {2}}}, 0, 1, &error));
  EXPECT_EQ(error, "group size must be positive, got 0");
  EXPECT_FALSE(UnitLayout::create({{"a", {2}}}, 2, 0, &error));
  EXPECT_EQ(error, "alignment must be positive, got 0");
  EXPECT_FALSE(UnitLayout::create({{"a", {2}}, {"a", {3}}}, 2, 1, &error));
  EXPECT_EQ(error, "member 'a' appears twice");
  EXPECT_FALSE(UnitLayout::create({{"a", {-2}}}, 2, 1, &error));
  EXPECT_EQ(error, "member 'a' has a negative extent or too many elements");
  int64_t half = std::numeric_limits<int64_t>::max() / 2 + 1;
  EXPECT_FALSE(
      UnitLayout::create({{"a", {half}}, {"b", {half}}}, 2, 1, &error));
  EXPECT_EQ(error, "unit is too large to lay out");
}

} // namespace
