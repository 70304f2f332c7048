//===- Version.cpp - NCCL library version ---------------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/Error.h"

#include <nccl.h>

#include <string>

using namespace zshard::rt;

extern "C" zshard_rt_status zshard_rt_nccl_version(int *version) {
  if (!version)
    return nullArgument("zshard_rt_nccl_version", "version");
  *version = 0;
  int code = 0;
  ncclResult_t result = ncclGetVersion(&code);
  if (result != ncclSuccess)
    return setError(ZSHARD_RT_ERROR_COMMUNICATION,
                    std::string("zshard_rt_nccl_version: ncclGetVersion "
                                "failed: ") +
                        ncclGetErrorString(result));
  *version = code;
  return ZSHARD_RT_OK;
}
