//===- LocalRankTest.cpp - Which GPU a rank uses --------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "device/LocalRank.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace zshard::rt;

namespace {

/// Sets or clears the two variables for one test.
class LocalRankEnv : public ::testing::Test {
protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    unsetenv("ZSHARD_LOCAL_RANK");
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  }
};

TEST_F(LocalRankEnv, RankModuloDevicesWithoutEnvironment) {
  std::string error;
  EXPECT_EQ(localDeviceOrdinal(0, 8, error), 0);
  EXPECT_EQ(localDeviceOrdinal(11, 8, error), 3);
  EXPECT_EQ(localDeviceOrdinal(5, 1, error), 0);
  EXPECT_TRUE(error.empty());
}

TEST_F(LocalRankEnv, ZshardLocalRankWinsOverOpenMpi) {
  std::string error;
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
  EXPECT_EQ(localDeviceOrdinal(9, 4, error), 2);
  setenv("ZSHARD_LOCAL_RANK", "1", 1);
  EXPECT_EQ(localDeviceOrdinal(9, 4, error), 1);
  EXPECT_TRUE(error.empty());
}

TEST_F(LocalRankEnv, LocalRankWithoutDeviceIsAnError) {
  std::string error;
  setenv("ZSHARD_LOCAL_RANK", "4", 1);
  EXPECT_EQ(localDeviceOrdinal(0, 4, error), -1);
  EXPECT_EQ(error, "local rank 4 (ZSHARD_LOCAL_RANK) has no GPU: this machine "
                   "has 4 CUDA devices");
  setenv("ZSHARD_LOCAL_RANK", "x1", 1);
  EXPECT_EQ(localDeviceOrdinal(0, 4, error), -1);
  EXPECT_EQ(error, "ZSHARD_LOCAL_RANK='x1' is not a non-negative integer");
}

} // namespace
