//===- DeviceCount.cpp - CUDA device discovery ----------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/Error.h"
#include "cuda/CudaStatus.h"

using namespace zshard::rt;

extern "C" zshard_rt_status zshard_rt_cuda_device_count(int *count) {
  if (!count)
    return nullArgument("zshard_rt_cuda_device_count", "count");
  return countCudaDevices("zshard_rt_cuda_device_count", count);
}
