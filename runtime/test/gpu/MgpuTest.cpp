//===- MgpuTest.cpp - MLIR's GPU host ABI on the runtime's device ---------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// requires-gpu. What gpu-to-llvm host code calls, in the order it calls it:
// a PTX module JIT-loaded (mgpuModuleLoadJIT) and as a fatbin nvcc builds
// from it at build time (mgpuModuleLoad), a function, the
// runtime's compute stream, device memory from the pool, copies, memsets,
// a launch, events, and a kernel writing pinned host memory (offloaded
// state). Declared here as the step library would see them.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" {
void *mgpuModuleLoadJIT(void *data, int optLevel);
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
}

using zshard::test::GpuFixture;

namespace {

/// The contents of \p path (NUL-terminated, as PTX must be).
std::vector<char> readFile(const char *path) {
  std::vector<char> bytes;
  FILE *file = std::fopen(path, "rb");
  if (!file)
    return bytes;
  char buffer[4096];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + got);
  std::fclose(file);
  bytes.push_back('\0');
  return bytes;
}

using Mgpu = GpuFixture;

void launch(void *function, void *stream, float *data, uint32_t n, float add) {
  void *dataArg = data;
  void *params[] = {&dataArg, &n, &add};
  mgpuLaunchKernel(function, (n + 127) / 128, 1, 1, 128, 1, 1, 0, stream,
                   params, nullptr, 3);
}

TEST_F(Mgpu, JitModuleLaunchOnTheComputeStream) {
  zshard_rt_set_current_mem_ctx(ctx);
  zshard_rt_set_current_device(device);
  std::vector<char> ptx = readFile(ZSHARD_TEST_PTX);
  ASSERT_GT(ptx.size(), 1u) << ZSHARD_TEST_PTX;
  void *module = mgpuModuleLoadJIT(ptx.data(), 2);
  ASSERT_NE(module, nullptr);
  void *function = mgpuModuleGetFunction(module, "twice_plus");
  ASSERT_NE(function, nullptr);
  void *stream = mgpuStreamCreate();
  EXPECT_EQ(stream, mgpuStreamCreate()); // the device's compute stream

  const uint32_t n = 1000;
  float *data = static_cast<float *>(mgpuMemAlloc(n * 4, stream, false));
  EXPECT_EQ(live(ZSHARD_RT_MEM_ACTIVATIONS), n * 4u);
  std::vector<float> host(n);
  for (uint32_t i = 0; i < n; ++i)
    host[i] = float(i);
  mgpuMemcpy(data, host.data(), n * 4, stream);
  launch(function, stream, data, n, 0.5f);
  void *event = mgpuEventCreate();
  mgpuEventRecord(event, stream);
  mgpuStreamWaitEvent(stream, event);
  mgpuEventSynchronize(event);
  mgpuMemcpy(host.data(), data, n * 4, stream);
  mgpuStreamSynchronize(stream);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(host[i], 2.0f * float(i) + 0.5f) << i;

  // 32- and 16-bit fills.
  mgpuMemset32(data, 0x3f800000u, n, stream); // 1.0f
  launch(function, stream, data, n, 1.0f);
  mgpuMemcpy(host.data(), data, n * 4, stream);
  mgpuStreamSynchronize(stream);
  EXPECT_EQ(host, std::vector<float>(n, 3.0f));
  mgpuMemset16(data, 0x4000, 2 * n, stream); // each float 0x40004000
  mgpuMemcpy(host.data(), data, 4, stream);
  mgpuStreamSynchronize(stream);
  uint32_t bits;
  std::memcpy(&bits, host.data(), 4);
  EXPECT_EQ(bits, 0x40004000u);

  mgpuEventDestroy(event);
  mgpuMemFree(data, stream);
  EXPECT_EQ(live(ZSHARD_RT_MEM_ACTIVATIONS), 0u);
  mgpuStreamDestroy(stream); // the compute stream: nothing happens
  mgpuModuleUnload(module);
  EXPECT_EQ(zshard_rt_device_synchronize(device), ZSHARD_RT_OK);
}

TEST_F(Mgpu, KernelWritesPinnedHostMemory) {
  zshard_rt_set_current_device(device);
  std::vector<char> ptx = readFile(ZSHARD_TEST_PTX);
  ASSERT_GT(ptx.size(), 1u) << ZSHARD_TEST_PTX;
  void *module = mgpuModuleLoadJIT(ptx.data(), 3);
  void *function = mgpuModuleGetFunction(module, "twice_plus");
  void *block = nullptr;
  const uint32_t n = 300;
  ASSERT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_OPTIMIZER_STATE,
                                   n * 4, ZSHARD_RT_PLACEMENT_HOST, &block),
            ZSHARD_RT_OK);
  float *state = static_cast<float *>(block);
  for (uint32_t i = 0; i < n; ++i)
    state[i] = float(i); // written by the host in place
  void *stream = mgpuStreamCreate();
  launch(function, stream, state, n, -1.0f);
  mgpuStreamSynchronize(stream);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(state[i], 2.0f * float(i) - 1.0f) << i; // read in place
  mgpuModuleUnload(module);
  release(block);
}

TEST_F(Mgpu, FatbinModule) {
  // The kernel as nvcc built it at build time: SASS for sm_80 and sm_90 and
  // PTX for later GPUs, loaded as gpu-module-to-binary's format=fatbin.
  zshard_rt_set_current_device(device);
  std::vector<char> fatbin = readFile(ZSHARD_TEST_FATBIN);
  ASSERT_GT(fatbin.size(), 1u) << ZSHARD_TEST_FATBIN;
  void *module = mgpuModuleLoad(fatbin.data(), fatbin.size() - 1);
  void *function = mgpuModuleGetFunction(module, "twice_plus");
  void *stream = mgpuStreamCreate();
  float *data = static_cast<float *>(mgpuMemAlloc(4 * 4, stream, false));
  mgpuMemset32(data, 0x40400000u, 4, stream); // 3.0f
  launch(function, stream, data, 4, 0.0f);
  std::vector<float> host(4);
  mgpuMemcpy(host.data(), data, 16, stream);
  mgpuStreamSynchronize(stream);
  EXPECT_EQ(host, std::vector<float>(4, 6.0f));
  mgpuMemFree(data, stream);
  mgpuModuleUnload(module);
}

} // namespace
