//===- Unavailable.cpp - NCCL entries of a build without NCCL -------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/Error.h"

using namespace zshard::rt;

extern "C" zshard_rt_status zshard_rt_nccl_version(int *version) {
  if (!version)
    return nullArgument("zshard_rt_nccl_version", "version");
  *version = 0;
  return setError(ZSHARD_RT_ERROR_UNAVAILABLE,
                  "zshard_rt_nccl_version: the zshard runtime was built "
                  "without NCCL (it needs ZSHARD_ENABLE_CUDA=ON and NCCL found "
                  "at configure time)");
}

extern "C" zshard_rt_status zshard_rt_nccl_comm_create(zshard_rt_device *device,
                                                       zshard_rt_comm **out) {
  (void)device;
  if (!out)
    return nullArgument("zshard_rt_nccl_comm_create", "out");
  *out = nullptr;
  return setError(ZSHARD_RT_ERROR_UNAVAILABLE,
                  "zshard_rt_nccl_comm_create: the zshard runtime was built "
                  "without NCCL (it needs ZSHARD_ENABLE_CUDA=ON and NCCL found "
                  "at configure time)");
}
