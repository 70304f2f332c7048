//===- MemoryCategory.h - names of the memory categories --------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The memory categories (zshard_rt_mem_category, RuntimeCodes.h) by name,
/// as the runtime's accounting reports them and the compiler's memory plan
/// prints them ("parameters", ..., "host_offload", "buffers"), and which of them are
/// device memory.
///
/// Header-only C++17 with no LLVM or MLIR dependency.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ABI_MEMORYCATEGORY_H
#define ZSHARD_ABI_MEMORYCATEGORY_H

#include "zshard/abi/RuntimeCodes.h"

namespace zshard_abi {

/// Number of memory categories.
inline constexpr int kNumMemCategories = ZSHARD_RT_MEM_NUM_CATEGORIES;

/// The lower-case name of category \p category, or nullptr when it is not
/// one.
constexpr const char *memCategoryName(int category) {
  switch (category) {
  case ZSHARD_RT_MEM_PARAMETERS:
    return "parameters";
  case ZSHARD_RT_MEM_GRADIENTS:
    return "gradients";
  case ZSHARD_RT_MEM_OPTIMIZER_STATE:
    return "optimizer_state";
  case ZSHARD_RT_MEM_ACTIVATIONS:
    return "activations";
  case ZSHARD_RT_MEM_COMMUNICATION:
    return "communication";
  case ZSHARD_RT_MEM_OTHER:
    return "other";
  case ZSHARD_RT_MEM_HOST_OFFLOAD:
    return "host_offload";
  case ZSHARD_RT_MEM_BUFFERS:
    return "buffers";
  default:
    return nullptr;
  }
}

/// Whether \p category is device memory, counted in the totals (every
/// category but the host pool).
constexpr bool isDeviceMemCategory(int category) {
  return category != ZSHARD_RT_MEM_HOST_OFFLOAD;
}

} // namespace zshard_abi

#endif // ZSHARD_ABI_MEMORYCATEGORY_H
