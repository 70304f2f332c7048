//===- RankDevice.cpp - The device a zshard-run rank runs on --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "RankDevice.h"

#include "core/Failure.h"

#include <string>

using namespace zshard;
using namespace zshard::run;

RankDevice::RankDevice(DeviceKind kind, int32_t rank) : kind(kind) {
  zshard_rt_device_kind which =
      kind == DeviceKind::Cuda ? ZSHARD_RT_DEVICE_CUDA : ZSHARD_RT_DEVICE_CPU;
  if (zshard_rt_device_create(which, rank, &device) == ZSHARD_RT_OK)
    return;
  // The runtime says "zshard_rt_device_create: <why>"; the user asked for
  // --device cuda.
  std::string why = zshard_rt_last_error_message();
  const std::string prefix = "zshard_rt_device_create: ";
  if (why.rfind(prefix, 0) == 0)
    why = why.substr(prefix.size());
  rt::fail(std::string(kind == DeviceKind::Cuda ? "--device cuda: "
                                                : "--device cpu: ") +
           why);
}

RankDevice::~RankDevice() { zshard_rt_device_destroy(device); }
