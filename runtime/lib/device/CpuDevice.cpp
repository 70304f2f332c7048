//===- CpuDevice.cpp - Step buffers in host memory ------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "device/CpuDevice.h"

#include "core/Failure.h"
#include "cpu/Alloc.h"

#include <cstring>
#include <string>

using namespace zshard::rt;

void *CpuDevice::allocate(zshard_rt_mem_ctx *ctx,
                          zshard_rt_mem_category category, uint64_t bytes,
                          BufferPlacement placement) {
  void *ptr = nullptr;
  if (zshard_rt_cpu_alloc(ctx, chargedCategory(category, placement), bytes, 0,
                          &ptr) != ZSHARD_RT_OK)
    fail("cpu: " + std::string(zshard_rt_last_error_message()));
  return ptr;
}

void CpuDevice::free(void *ptr) {
  if (!ptr)
    return;
  zshard_rt_mem_ctx *ctx = cpuBlockContext(ptr);
  if (!ctx || zshard_rt_cpu_free(ctx, ptr) != ZSHARD_RT_OK)
    fail("cpu: cannot free " +
         std::string(ctx ? zshard_rt_last_error_message()
                         : "a block that is not the runtime's"));
}

void CpuDevice::copyToDevice(void *dst, const void *src, uint64_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
}

void CpuDevice::copyToHost(void *dst, const void *src, uint64_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
}

void CpuDevice::memsetZero(void *ptr, uint64_t bytes) {
  if (bytes)
    std::memset(ptr, 0, bytes);
}
