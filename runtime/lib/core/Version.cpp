//===- Version.cpp - Library version and build features -------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"
#include "zshard/runtime/zshard_rt_config.h"

#define ZSHARD_RT_STRINGIFY_IMPL(x) #x
#define ZSHARD_RT_STRINGIFY(x) ZSHARD_RT_STRINGIFY_IMPL(x)

extern "C" void zshard_rt_version(int *major, int *minor, int *patch) {
  if (major)
    *major = ZSHARD_RT_VERSION_MAJOR;
  if (minor)
    *minor = ZSHARD_RT_VERSION_MINOR;
  if (patch)
    *patch = ZSHARD_RT_VERSION_PATCH;
}

extern "C" const char *zshard_rt_version_string(void) {
  return ZSHARD_RT_STRINGIFY(ZSHARD_RT_VERSION_MAJOR) "." ZSHARD_RT_STRINGIFY(
      ZSHARD_RT_VERSION_MINOR) "." ZSHARD_RT_STRINGIFY(ZSHARD_RT_VERSION_PATCH);
}

extern "C" uint32_t zshard_rt_build_features(void) {
  uint32_t features = 0;
#if ZSHARD_HAS_CUDA
  features |= ZSHARD_RT_FEATURE_CUDA;
#endif
#if ZSHARD_HAS_NCCL
  features |= ZSHARD_RT_FEATURE_NCCL;
#endif
#if ZSHARD_HAS_MPI
  features |= ZSHARD_RT_FEATURE_MPI;
#endif
  return features;
}
