//===- Unavailable.cpp - CUDA entries of a build without CUDA -------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Compiled instead of the CUDA sources when ZSHARD_ENABLE_CUDA is OFF: the C
// ABI stays the same and every CUDA entry reports why it cannot run.
//
//===----------------------------------------------------------------------===//

#include "core/Error.h"
#include "device/Device.h"

#include <string>

using namespace zshard::rt;

namespace {
zshard_rt_status notBuilt(const char *entry) {
  return setError(ZSHARD_RT_ERROR_UNAVAILABLE,
                  std::string(entry) +
                      ": the zshard runtime was built without CUDA "
                      "(ZSHARD_ENABLE_CUDA=OFF)");
}
} // namespace

extern "C" zshard_rt_status zshard_rt_cuda_device_count(int *count) {
  if (!count)
    return nullArgument("zshard_rt_cuda_device_count", "count");
  *count = 0;
  return notBuilt("zshard_rt_cuda_device_count");
}

extern "C" zshard_rt_status zshard_rt_cuda_self_test(int device, int64_t n) {
  (void)device;
  (void)n;
  return notBuilt("zshard_rt_cuda_self_test");
}

std::unique_ptr<Device> zshard::rt::makeCudaDevice(int32_t) {
  throw DeviceFailure(ZSHARD_RT_ERROR_UNAVAILABLE,
                      "the zshard runtime was built without CUDA "
                      "(ZSHARD_ENABLE_CUDA=OFF)");
}
