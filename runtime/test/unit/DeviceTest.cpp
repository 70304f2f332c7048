//===- DeviceTest.cpp - Tests of the device ABI on the host ---------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The CPU device through the C ABI (allocation and its categories, copies,
// zeroing, the current device), and what asking for a CUDA device says on a
// machine without a GPU. The CUDA device itself is tested by
// test/gpu/CudaDeviceTest.cpp (requires-gpu).
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

uint64_t live(zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category) {
  uint64_t bytes = 0;
  EXPECT_EQ(zshard_rt_mem_live_bytes(ctx, category, &bytes), ZSHARD_RT_OK);
  return bytes;
}

TEST(Device, CpuAllocatesChargesAndCopies) {
  zshard_rt_device *device = nullptr;
  ASSERT_EQ(zshard_rt_device_create(ZSHARD_RT_DEVICE_CPU, 3, &device),
            ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_device_get_kind(device), ZSHARD_RT_DEVICE_CPU);
  EXPECT_STREQ(zshard_rt_device_name(device), "cpu");
  zshard_rt_mem_ctx *ctx = nullptr;
  ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);

  void *onDevice = nullptr, *onHost = nullptr, *empty = nullptr;
  ASSERT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_PARAMETERS, 100,
                                   ZSHARD_RT_PLACEMENT_DEVICE, &onDevice),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_OPTIMIZER_STATE,
                                   40, ZSHARD_RT_PLACEMENT_HOST, &onHost),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_OTHER, 0,
                                   ZSHARD_RT_PLACEMENT_DEVICE, &empty),
            ZSHARD_RT_OK);
  EXPECT_NE(empty, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(onDevice) % 64, 0u);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_PARAMETERS), 100u);
  // Host placement is the host pool, whatever the category asked for.
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_OPTIMIZER_STATE), 0u);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_HOST_OFFLOAD), 40u);

  std::vector<unsigned char> in(100), out(100, 0xff);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<unsigned char>(i * 7);
  ASSERT_EQ(zshard_rt_device_copy_to_device(device, onDevice, in.data(), 100),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_device_copy_to_host(device, out.data(), onDevice, 100),
            ZSHARD_RT_OK);
  EXPECT_EQ(out, in);
  ASSERT_EQ(zshard_rt_device_memset_zero(device, onDevice, 60), ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_device_copy_to_host(device, out.data(), onDevice, 100),
            ZSHARD_RT_OK);
  for (size_t i = 0; i < 100; ++i)
    ASSERT_EQ(out[i], i < 60 ? 0 : in[i]) << i;
  EXPECT_EQ(zshard_rt_device_synchronize(device), ZSHARD_RT_OK);

  EXPECT_EQ(zshard_rt_device_free(device, onDevice), ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_device_free(device, onHost), ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_device_free(device, empty), ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_device_free(device, nullptr), ZSHARD_RT_OK);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_PARAMETERS), 0u);
  EXPECT_EQ(live(ctx, ZSHARD_RT_MEM_HOST_OFFLOAD), 0u);
  zshard_rt_mem_ctx_destroy(ctx);
  zshard_rt_device_destroy(device);
}

TEST(Device, ArgumentErrors) {
  zshard_rt_device *device = nullptr;
  EXPECT_EQ(zshard_rt_device_create(static_cast<zshard_rt_device_kind>(7), 0,
                                    &device),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(device, nullptr);
  EXPECT_EQ(zshard_rt_device_create(ZSHARD_RT_DEVICE_CPU, -1, &device),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_device_create(ZSHARD_RT_DEVICE_CPU, 0, nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(zshard_rt_device_create(ZSHARD_RT_DEVICE_CPU, 0, &device),
            ZSHARD_RT_OK);
  zshard_rt_mem_ctx *ctx = nullptr;
  ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  void *ptr = reinterpret_cast<void *>(1);
  EXPECT_EQ(zshard_rt_device_alloc(device, ctx,
                                   static_cast<zshard_rt_mem_category>(99), 8,
                                   ZSHARD_RT_PLACEMENT_DEVICE, &ptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_OTHER, 8,
                                   static_cast<zshard_rt_placement>(2), &ptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zshard_rt_last_error_message()).find("placement"),
            std::string::npos);
  EXPECT_EQ(zshard_rt_device_alloc(device, nullptr, ZSHARD_RT_MEM_OTHER, 8,
                                   ZSHARD_RT_PLACEMENT_DEVICE, &ptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zshard_rt_device_copy_to_host(device, nullptr, &ptr, 8),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  int local = 0;
  EXPECT_EQ(zshard_rt_device_free(device, &local), ZSHARD_RT_ERROR_DEVICE);
  EXPECT_NE(std::string(zshard_rt_last_error_message()).find("not the runtime"),
            std::string::npos);
  zshard_rt_mem_ctx_destroy(ctx);
  zshard_rt_device_destroy(device);
  zshard_rt_device_destroy(nullptr);
}

TEST(Device, CurrentDeviceIsPerThreadAndCpuKeepsHostPaths) {
  zshard_rt_device *device = nullptr;
  ASSERT_EQ(zshard_rt_device_create(ZSHARD_RT_DEVICE_CPU, 0, &device),
            ZSHARD_RT_OK);
  EXPECT_EQ(zshard_rt_current_device(), nullptr);
  zshard_rt_set_current_device(device);
  EXPECT_EQ(zshard_rt_current_device(), device);
  // The hooks and the products still run on the host.
  void *block = _mlir_memref_to_llvm_alloc(32);
  std::memset(block, 0, 32);
  _mlir_memref_to_llvm_free(block);
  float a = 2, b = 3, c = 1;
  zshard_rt_step_sgemm(0, 0, 1, 1, 1, 1, &a, 1, 0, &b, 1, 0, &c, 1, 0, 1);
  EXPECT_EQ(c, 7.0f);
  // Destroying the current device clears it.
  zshard_rt_device_destroy(device);
  EXPECT_EQ(zshard_rt_current_device(), nullptr);
}

TEST(Device, CudaWithoutGpuSaysWhy) {
  int count = 0;
  if (zshard_rt_cuda_device_count(&count) == ZSHARD_RT_OK)
    GTEST_SKIP() << "a GPU is present (see runtime.gpu.cuda-device)";
  zshard_rt_device *device = reinterpret_cast<zshard_rt_device *>(1);
  EXPECT_EQ(zshard_rt_device_create(ZSHARD_RT_DEVICE_CUDA, 0, &device),
            ZSHARD_RT_ERROR_UNAVAILABLE);
  EXPECT_EQ(device, nullptr);
  std::string message = zshard_rt_last_error_message();
  EXPECT_EQ(message.rfind("zshard_rt_device_create: ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_GT(message.size(), std::string("zshard_rt_device_create: ").size());
}

} // namespace
