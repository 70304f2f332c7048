//===- GpuTestSupport.h - Helpers of the GPU tests --------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TEST_GPU_GPUTESTSUPPORT_H
#define ZSHARD_RUNTIME_TEST_GPU_GPUTESTSUPPORT_H

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace zshard::test {

/// A CUDA device and a memory context for one test, the device current on
/// the test's thread while it lives.
class GpuFixture : public ::testing::Test {
public:
  void SetUp() override {
    ASSERT_EQ(zshard_rt_device_create(ZSHARD_RT_DEVICE_CUDA, 0, &device),
              ZSHARD_RT_OK)
        << zshard_rt_last_error_message();
    ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  }
  void TearDown() override {
    zshard_rt_set_current_device(nullptr);
    zshard_rt_set_current_mem_ctx(nullptr);
    zshard_rt_device_destroy(device);
    zshard_rt_mem_ctx_destroy(ctx);
  }

  /// A device block holding \p host.
  template <typename T> T *upload(const std::vector<T> &host) {
    void *ptr = nullptr;
    EXPECT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_OTHER,
                                     host.size() * sizeof(T),
                                     ZSHARD_RT_PLACEMENT_DEVICE, &ptr),
              ZSHARD_RT_OK)
        << zshard_rt_last_error_message();
    EXPECT_EQ(zshard_rt_device_copy_to_device(device, ptr, host.data(),
                                              host.size() * sizeof(T)),
              ZSHARD_RT_OK)
        << zshard_rt_last_error_message();
    return static_cast<T *>(ptr);
  }

  template <typename T> std::vector<T> download(const T *ptr, size_t count) {
    std::vector<T> host(count);
    EXPECT_EQ(zshard_rt_device_copy_to_host(device, host.data(), ptr,
                                            count * sizeof(T)),
              ZSHARD_RT_OK)
        << zshard_rt_last_error_message();
    return host;
  }

  void release(void *ptr) {
    EXPECT_EQ(zshard_rt_device_free(device, ptr), ZSHARD_RT_OK)
        << zshard_rt_last_error_message();
  }

  uint64_t live(zshard_rt_mem_category category) {
    uint64_t bytes = 0;
    zshard_rt_mem_live_bytes(ctx, category, &bytes);
    return bytes;
  }

  zshard_rt_device *device = nullptr;
  zshard_rt_mem_ctx *ctx = nullptr;
};

} // namespace zshard::test

#endif // ZSHARD_RUNTIME_TEST_GPU_GPUTESTSUPPORT_H
