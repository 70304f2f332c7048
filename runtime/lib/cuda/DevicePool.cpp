//===- DevicePool.cpp - Caching pool of CUDA device memory ----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "cuda/DevicePool.h"

#include "device/Device.h"

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

using namespace zshard::rt;

namespace {

constexpr uint64_t smallLimit = uint64_t(1) << 20;
constexpr uint64_t smallGranule = 512;
constexpr uint64_t largeGranule = uint64_t(2) << 20;
constexpr uint64_t maxAlignment = uint64_t(2) << 20;

uint64_t roundUp(uint64_t x, uint64_t granule) {
  return (x + granule - 1) / granule * granule;
}

std::string cudaText(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " +
         cudaGetErrorString(error);
}

} // namespace

uint64_t DevicePool::roundedSize(uint64_t bytes) {
  if (bytes == 0)
    return smallGranule;
  return bytes < smallLimit ? roundUp(bytes, smallGranule)
                            : roundUp(bytes, largeGranule);
}

DevicePool::DevicePool(int ordinal, std::string deviceName)
    : ordinal(ordinal), deviceName(std::move(deviceName)) {}

DevicePool::~DevicePool() {
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess)
    previous = -1;
  cudaSetDevice(ordinal);
  {
    std::lock_guard<std::mutex> lock(mutex);
    releaseCachedLocked();
  }
  if (previous >= 0)
    cudaSetDevice(previous);
  (void)cudaGetLastError();
}

void *DevicePool::take(uint64_t size, uint64_t &taken) {
  uint64_t slack = size < smallLimit ? 0 : size / 8;
  auto it = cached.lower_bound(size);
  if (it != cached.end() && it->first <= size + slack) {
    void *base = it->second;
    taken = it->first;
    cachedTotal -= it->first;
    cached.erase(it);
    return base;
  }
  void *base = nullptr;
  cudaError_t error = cudaMalloc(&base, size);
  if (error == cudaErrorMemoryAllocation && !cached.empty()) {
    (void)cudaGetLastError();
    releaseCachedLocked();
    error = cudaMalloc(&base, size);
  }
  if (error == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return nullptr;
  }
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    throw DeviceFailure(ZSHARD_RT_ERROR_DEVICE,
                        deviceName + ": cudaMalloc of " + std::to_string(size) +
                            " bytes failed: " + cudaText(error));
  }
  reserved += size;
  taken = size;
  return base;
}

void *DevicePool::allocate(zshard_rt_mem_ctx *ctx,
                           zshard_rt_mem_category category, uint64_t bytes,
                           uint64_t alignment) {
  if (alignment < 256)
    alignment = 256;
  if (alignment > maxAlignment || (alignment & (alignment - 1)))
    throw DeviceFailure(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                        deviceName + ": alignment " +
                            std::to_string(alignment) +
                            " is not a power of two up to 2 MiB");
  if (zshard_rt_mem_record_alloc(ctx, category, bytes) != ZSHARD_RT_OK)
    throw DeviceFailure(ZSHARD_RT_ERROR_ACCOUNTING,
                        zshard_rt_last_error_message());
  // cudaMalloc aligns to 256 bytes; more takes room to move up in.
  uint64_t extra = alignment > 256 ? alignment : 0;
  uint64_t size = roundedSize(bytes + extra);
  std::lock_guard<std::mutex> lock(mutex);
  uint64_t taken = 0;
  void *base = nullptr;
  try {
    base = take(size, taken);
  } catch (...) {
    zshard_rt_mem_record_free(ctx, category, bytes);
    throw;
  }
  if (!base) {
    zshard_rt_mem_record_free(ctx, category, bytes);
    size_t freeBytes = 0, totalBytes = 0;
    cudaMemGetInfo(&freeBytes, &totalBytes);
    (void)cudaGetLastError();
    const char *what = zshard_rt_mem_category_name(category);
    throw DeviceFailure(
        ZSHARD_RT_ERROR_OUT_OF_MEMORY,
        deviceName + ": out of device memory: " + std::to_string(bytes) +
            " bytes for " + (what ? what : "?") + " (the device has " +
            std::to_string(freeBytes) + " of " + std::to_string(totalBytes) +
            " bytes free; this pool holds " + std::to_string(reserved) +
            " bytes)");
  }
  auto address = reinterpret_cast<uintptr_t>(base);
  void *ptr = reinterpret_cast<void *>((address + alignment - 1) / alignment *
                                       alignment);
  live.emplace(ptr, Block{base, taken, bytes, ctx, category});
  return ptr;
}

bool DevicePool::free(void *ptr) {
  Block block;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = live.find(ptr);
    if (it == live.end())
      return false;
    block = it->second;
    live.erase(it);
    cached.emplace(block.size, block.base);
    cachedTotal += block.size;
  }
  zshard_rt_mem_record_free(block.ctx, block.category, block.bytes);
  return true;
}

bool DevicePool::owns(const void *ptr) const {
  std::lock_guard<std::mutex> lock(mutex);
  return live.count(const_cast<void *>(ptr)) != 0;
}

void DevicePool::releaseCached() {
  std::lock_guard<std::mutex> lock(mutex);
  releaseCachedLocked();
}

void DevicePool::releaseCachedLocked() {
  for (auto &[size, base] : cached) {
    cudaFree(base);
    reserved -= size;
  }
  (void)cudaGetLastError();
  cached.clear();
  cachedTotal = 0;
}

uint64_t DevicePool::reservedBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return reserved;
}

uint64_t DevicePool::cachedBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return cachedTotal;
}
