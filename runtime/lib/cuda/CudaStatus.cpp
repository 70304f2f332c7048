//===- CudaStatus.cpp - CUDA errors as runtime statuses -------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaStatus.h"

#include "core/Error.h"

#include <string>

using namespace zshard::rt;

bool zshard::rt::isCudaUnavailable(cudaError_t error) {
  switch (error) {
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorStubLibrary:
  case cudaErrorDevicesUnavailable:
  case cudaErrorSystemDriverMismatch:
  case cudaErrorCompatNotSupportedOnDevice:
  case cudaErrorSystemNotReady:
  case cudaErrorCallRequiresNewerDriver:
    return true;
  default:
    return false;
  }
}

zshard_rt_status zshard::rt::cudaFailure(const char *entry, const char *call,
                                         cudaError_t error) {
  (void)cudaGetLastError();
  zshard_rt_status status = ZSHARD_RT_ERROR_DEVICE;
  if (isCudaUnavailable(error))
    status = ZSHARD_RT_ERROR_UNAVAILABLE;
  else if (error == cudaErrorMemoryAllocation)
    status = ZSHARD_RT_ERROR_OUT_OF_MEMORY;
  return setError(status, std::string(entry) + ": " + call +
                              " failed: " + cudaGetErrorName(error) + ": " +
                              cudaGetErrorString(error));
}

zshard_rt_status zshard::rt::countCudaDevices(const char *entry, int *count) {
  *count = 0;
  int devices = 0;
  if (cudaError_t error = cudaGetDeviceCount(&devices))
    return cudaFailure(entry, "cudaGetDeviceCount", error);
  if (devices == 0)
    return setError(ZSHARD_RT_ERROR_UNAVAILABLE,
                    std::string(entry) + ": no CUDA device present");
  *count = devices;
  return ZSHARD_RT_OK;
}
