//===- BackendsTest.cpp - Tests of built backends and discovery -----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// What each backend entry does depends on the build (zshard_rt_config.h) and,
// for CUDA, on the machine. These tests hold in every build and on machines
// with or without a GPU: they check that an entry either works or says why
// not, never fails silently.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"
#include "zshard/runtime/zshard_rt_config.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace {
bool mentions(const char *text) {
  return std::strstr(zshard_rt_last_error_message(), text) != nullptr;
}
} // namespace

// Tests that the build features agree with the configuration header.
TEST(BackendsTest, FeaturesMatchConfig) {
  uint32_t features = zshard_rt_build_features();
  EXPECT_EQ((features & ZSHARD_RT_FEATURE_CUDA) != 0, ZSHARD_HAS_CUDA == 1);
  EXPECT_EQ((features & ZSHARD_RT_FEATURE_NCCL) != 0, ZSHARD_HAS_NCCL == 1);
  EXPECT_EQ((features & ZSHARD_RT_FEATURE_MPI) != 0, ZSHARD_HAS_MPI == 1);
  if (features & ZSHARD_RT_FEATURE_NCCL) {
    EXPECT_TRUE(features & ZSHARD_RT_FEATURE_CUDA) << "NCCL implies CUDA";
  }
}

// Tests that the CUDA device count is either positive or comes with a reason.
TEST(BackendsTest, CudaDeviceCountOrReason) {
  int count = -1;
  zshard_rt_clear_last_error();
  zshard_rt_status status = zshard_rt_cuda_device_count(&count);
#if ZSHARD_HAS_CUDA
  if (status == ZSHARD_RT_OK) {
    EXPECT_GT(count, 0);
  } else {
    EXPECT_EQ(status, ZSHARD_RT_ERROR_UNAVAILABLE)
        << zshard_rt_last_error_message();
    EXPECT_EQ(count, 0);
    EXPECT_TRUE(mentions("zshard_rt_cuda_device_count: "))
        << zshard_rt_last_error_message();
  }
#else
  EXPECT_EQ(status, ZSHARD_RT_ERROR_UNAVAILABLE);
  EXPECT_EQ(count, 0);
  EXPECT_TRUE(mentions("ZSHARD_ENABLE_CUDA=OFF"))
      << zshard_rt_last_error_message();
  EXPECT_EQ(zshard_rt_cuda_self_test(0, 16), ZSHARD_RT_ERROR_UNAVAILABLE);
#endif
  EXPECT_EQ(zshard_rt_cuda_device_count(nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
}

// Tests that the CUDA self-test rejects bad arguments before touching a
// device, and is unavailable, not failing, where no device is.
TEST(BackendsTest, CudaSelfTestArguments) {
  EXPECT_NE(zshard_rt_cuda_self_test(0, -1), ZSHARD_RT_OK);
  int count = 0;
  if (zshard_rt_cuda_device_count(&count) != ZSHARD_RT_OK) {
    EXPECT_EQ(zshard_rt_cuda_self_test(0, 16), ZSHARD_RT_ERROR_UNAVAILABLE);
    return;
  }
  EXPECT_EQ(zshard_rt_cuda_self_test(count, 16),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
}

// Tests the NCCL version: a real MAJOR*10000+MINOR*100+PATCH code when built
// with NCCL, otherwise unavailable with a reason.
TEST(BackendsTest, NcclVersion) {
  int version = -1;
  zshard_rt_status status = zshard_rt_nccl_version(&version);
#if ZSHARD_HAS_NCCL
  ASSERT_EQ(status, ZSHARD_RT_OK) << zshard_rt_last_error_message();
  EXPECT_GE(version, 20000);
#else
  EXPECT_EQ(status, ZSHARD_RT_ERROR_UNAVAILABLE);
  EXPECT_EQ(version, 0);
  EXPECT_TRUE(mentions("without NCCL")) << zshard_rt_last_error_message();
#endif
}

// Tests the MPI entries that need no launcher: a build without MPI says so,
// and asking for the world before MPI is initialized fails with a reason.
TEST(BackendsTest, MpiWithoutLauncher) {
  int rank = -1, size = -1;
  zshard_rt_status status = zshard_rt_mpi_world(&rank, &size);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(size, 0);
#if ZSHARD_HAS_MPI
  EXPECT_EQ(status, ZSHARD_RT_ERROR_COMMUNICATION);
  EXPECT_TRUE(mentions("not initialized")) << zshard_rt_last_error_message();
  // Never initialized by the runtime, so there is nothing to finalize.
  EXPECT_EQ(zshard_rt_mpi_finalize(), ZSHARD_RT_OK);
#else
  EXPECT_EQ(status, ZSHARD_RT_ERROR_UNAVAILABLE);
  EXPECT_TRUE(mentions("ZSHARD_ENABLE_MPI=OFF"))
      << zshard_rt_last_error_message();
  EXPECT_EQ(zshard_rt_mpi_init(nullptr, nullptr), ZSHARD_RT_ERROR_UNAVAILABLE);
#endif
  EXPECT_EQ(zshard_rt_mpi_world(nullptr, &size),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
}
