//===- CudaDevice.cpp - A rank's CUDA device ------------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"

#include "cuda/CudaStatus.h"
#include "device/LocalRank.h"

#include <cuda_runtime.h>

#include <cstring>
#include <string>

using namespace zshard::rt;

namespace {

/// "13.0" of a CUDA version code such as 13000.
std::string versionText(int code) {
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
}

std::string errorText(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " +
         cudaGetErrorString(error);
}

/// Says why this machine cannot run CUDA, or returns when it can.
void requireDriver() {
  int driver = 0;
  cudaError_t error = cudaDriverGetVersion(&driver);
  (void)cudaGetLastError();
  if (error != cudaSuccess || driver == 0)
    throw DeviceFailure(ZSHARD_RT_ERROR_UNAVAILABLE,
                        "no CUDA driver (no NVIDIA GPU driver is installed "
                        "on this machine; --device cuda needs one)");
  if (driver < CUDART_VERSION)
    throw DeviceFailure(
        ZSHARD_RT_ERROR_UNAVAILABLE,
        "the CUDA driver supports CUDA " + versionText(driver) +
            ", older than the CUDA runtime " + versionText(CUDART_VERSION) +
            " the zshard runtime was built with; update the NVIDIA driver");
}

} // namespace

std::unique_ptr<Device> zshard::rt::makeCudaDevice(int32_t rank) {
  return std::make_unique<CudaDevice>(rank);
}

void CudaDevice::check(cudaError_t error, const char *call) const {
  if (error == cudaSuccess)
    return;
  (void)cudaGetLastError();
  zshard_rt_status status =
      isCudaUnavailable(error)             ? ZSHARD_RT_ERROR_UNAVAILABLE
      : error == cudaErrorMemoryAllocation ? ZSHARD_RT_ERROR_OUT_OF_MEMORY
                                           : ZSHARD_RT_ERROR_DEVICE;
  throw DeviceFailure(status, deviceName + ": " + call +
                                  " failed: " + errorText(error));
}

CudaDevice::CudaDevice(int32_t rank) : deviceName("cuda") {
  requireDriver();
  int count = 0;
  if (cudaError_t error = cudaGetDeviceCount(&count)) {
    (void)cudaGetLastError();
    throw DeviceFailure(isCudaUnavailable(error) ? ZSHARD_RT_ERROR_UNAVAILABLE
                                                 : ZSHARD_RT_ERROR_DEVICE,
                        "cudaGetDeviceCount failed: " + errorText(error));
  }
  if (count == 0)
    throw DeviceFailure(ZSHARD_RT_ERROR_UNAVAILABLE,
                        "no CUDA device on this machine");
  std::string why;
  deviceOrdinal = localDeviceOrdinal(rank, count, why);
  if (deviceOrdinal < 0)
    throw DeviceFailure(ZSHARD_RT_ERROR_INVALID_ARGUMENT, why);
  deviceName = "cuda:" + std::to_string(deviceOrdinal);
  check(cudaSetDevice(deviceOrdinal), "cudaSetDevice");
  cudaDeviceProp props;
  check(cudaGetDeviceProperties(&props, deviceOrdinal),
        "cudaGetDeviceProperties");
  deviceName += " (" + std::string(props.name) + ")";
  if (!props.unifiedAddressing)
    throw DeviceFailure(ZSHARD_RT_ERROR_UNAVAILABLE,
                        deviceName +
                            ": no unified addressing (offloaded state needs "
                            "mapped host memory kernels can address)");
  check(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking),
        "cudaStreamCreateWithFlags (compute)");
  check(cudaStreamCreateWithFlags(&comm, cudaStreamNonBlocking),
        "cudaStreamCreateWithFlags (communication)");
  devicePool = std::make_unique<DevicePool>(deviceOrdinal, deviceName);
}

CudaDevice::~CudaDevice() {
  cudaSetDevice(deviceOrdinal);
  if (compute)
    cudaStreamSynchronize(compute);
  if (comm)
    cudaStreamSynchronize(comm);
  if (blasHandle)
    cublasDestroy(blasHandle);
  devicePool.reset();
  {
    std::lock_guard<std::mutex> lock(hostMutex);
    for (auto &[ptr, block] : hostBlocks)
      cudaFreeHost(ptr);
    hostBlocks.clear();
  }
  if (compute)
    cudaStreamDestroy(compute);
  if (comm)
    cudaStreamDestroy(comm);
  (void)cudaGetLastError();
}

void CudaDevice::makeCurrent() {
  check(cudaSetDevice(deviceOrdinal), "cudaSetDevice");
}

void *CudaDevice::allocate(zshard_rt_mem_ctx *ctx,
                           zshard_rt_mem_category category, uint64_t bytes,
                           BufferPlacement placement) {
  makeCurrent();
  if (placement == BufferPlacement::Device)
    return devicePool->allocate(ctx, category, bytes);
  if (zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_HOST_OFFLOAD, bytes) !=
      ZSHARD_RT_OK)
    throw DeviceFailure(ZSHARD_RT_ERROR_ACCOUNTING,
                        zshard_rt_last_error_message());
  void *ptr = nullptr;
  cudaError_t error = cudaHostAlloc(
      &ptr, bytes ? bytes : 1, cudaHostAllocMapped | cudaHostAllocPortable);
  if (error != cudaSuccess) {
    zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_HOST_OFFLOAD, bytes);
    (void)cudaGetLastError();
    const char *what = zshard_rt_mem_category_name(category);
    throw DeviceFailure(
        error == cudaErrorMemoryAllocation ? ZSHARD_RT_ERROR_OUT_OF_MEMORY
                                           : ZSHARD_RT_ERROR_DEVICE,
        deviceName + ": cannot allocate " + std::to_string(bytes) +
            " bytes of pinned host memory for offloaded " +
            (what ? what : "?") +
            ": cudaHostAlloc failed: " + errorText(error));
  }
  std::lock_guard<std::mutex> lock(hostMutex);
  hostBlocks.emplace(ptr, HostBlock{bytes, ctx});
  return ptr;
}

bool CudaDevice::freeHost(void *ptr) {
  HostBlock block;
  {
    std::lock_guard<std::mutex> lock(hostMutex);
    auto it = hostBlocks.find(ptr);
    if (it == hostBlocks.end())
      return false;
    block = it->second;
    hostBlocks.erase(it);
  }
  // Queued kernels may still use the block.
  cudaStreamSynchronize(compute);
  cudaFreeHost(ptr);
  (void)cudaGetLastError();
  zshard_rt_mem_record_free(block.ctx, ZSHARD_RT_MEM_HOST_OFFLOAD, block.bytes);
  return true;
}

void CudaDevice::free(void *ptr) {
  if (!ptr)
    return;
  if (devicePool->free(ptr) || freeHost(ptr))
    return;
  throw DeviceFailure(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                      deviceName + ": cannot free a block that is not this "
                                   "device's (or was freed already)");
}

void CudaDevice::copyToDevice(void *dst, const void *src, uint64_t bytes) {
  if (!bytes)
    return;
  makeCurrent();
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, compute),
        "cudaMemcpyAsync (to the device)");
  check(cudaStreamSynchronize(compute), "cudaStreamSynchronize");
}

void CudaDevice::copyToHost(void *dst, const void *src, uint64_t bytes) {
  if (!bytes)
    return;
  makeCurrent();
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, compute),
        "cudaMemcpyAsync (to the host)");
  check(cudaStreamSynchronize(compute), "cudaStreamSynchronize");
}

void CudaDevice::memsetZero(void *ptr, uint64_t bytes) {
  if (!bytes)
    return;
  makeCurrent();
  bool host;
  {
    std::lock_guard<std::mutex> lock(hostMutex);
    host = hostBlocks.count(ptr) != 0;
  }
  if (host) {
    // Pinned host memory: after the queued work, on the host.
    check(cudaStreamSynchronize(compute), "cudaStreamSynchronize");
    std::memset(ptr, 0, bytes);
    return;
  }
  check(cudaMemsetAsync(ptr, 0, bytes, compute), "cudaMemsetAsync");
}

void CudaDevice::synchronize() {
  makeCurrent();
  check(cudaStreamSynchronize(compute), "cudaStreamSynchronize (compute)");
  check(cudaStreamSynchronize(comm), "cudaStreamSynchronize (communication)");
}
