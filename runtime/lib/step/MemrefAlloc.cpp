//===- MemrefAlloc.cpp - MLIR allocation hooks over accounted memory ------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// A step lowered with finalize-memref-to-llvm{use-generic-functions} allocates
// its intermediate buffers through _mlir_memref_to_llvm_alloc /
// _aligned_alloc / _free. Here they are zshard_rt_cpu_alloc blocks charged to
// the activations of the calling thread's current memory context (one per
// rank, set by the launcher), or of a process-wide default context when none
// is set. A block remembers its context, so a free credits the right one.
//
// When the thread's current device is a GPU (zshard_rt_set_current_device),
// the hooks hand out that device's memory instead (its pool, same context and
// category), and a free gives a block of that device back to it; anything
// else is freed as a host block.
//
//===----------------------------------------------------------------------===//

#include "core/MemoryAccounting.h"
#include "cpu/Alloc.h"
#include "device/CurrentDevice.h"
#include "device/Device.h"
#include "step/Fatal.h"

#include "zshard/runtime/zshard_rt.h"

#include <cstddef>
#include <cstdint>

using namespace zshard::rt;

namespace {

/// The context set by zshard_rt_set_current_mem_ctx on this thread, or NULL.
thread_local zshard_rt_mem_ctx *currentCtx = nullptr;

/// The category the next hook allocation is charged to; compiled steps set it
/// before each allocation (zshard-tag-allocations).
thread_local zshard_rt_mem_category currentCategory = ZSHARD_RT_MEM_ACTIVATIONS;

/// The smallest alignment handed out: a cache line (and any SIMD load).
constexpr size_t minAlignment = 64;

/// The largest alignment zshard_rt_cpu_alloc accepts.
constexpr size_t maxAlignment = size_t(1) << 21;

void *allocate(const char *entry, size_t alignment, size_t size) {
  if (Device *device = currentStepDevice())
    return device->stepAllocate(zshard_rt_current_mem_ctx(), currentCategory,
                                size, alignment);
  void *ptr = nullptr;
  zshard_rt_status status = zshard_rt_cpu_alloc(
      zshard_rt_current_mem_ctx(), currentCategory, size, alignment, &ptr);
  if (status != ZSHARD_RT_OK)
    stepFatal(entry, "%s", zshard_rt_last_error_message());
  return ptr;
}

} // namespace

zshard_rt_mem_category zshard::rt::currentStepAllocCategory() {
  return currentCategory;
}

extern "C" void zshard_rt_set_current_mem_ctx(zshard_rt_mem_ctx *ctx) {
  currentCtx = ctx;
}

extern "C" void zshard_rt_step_set_alloc_category(int32_t category) {
  if (category < 0 || category >= ZSHARD_RT_MEM_NUM_CATEGORIES)
    stepFatal("zshard_rt_step_set_alloc_category", "%d is not a category",
              static_cast<int>(category));
  currentCategory = static_cast<zshard_rt_mem_category>(category);
}

extern "C" zshard_rt_mem_ctx *zshard_rt_current_mem_ctx(void) {
  return currentCtx ? currentCtx : zshard_rt_default_mem_ctx();
}

extern "C" zshard_rt_mem_ctx *zshard_rt_default_mem_ctx(void) {
  // Never destroyed: blocks may outlive static destruction.
  static zshard_rt_mem_ctx *ctx = new zshard_rt_mem_ctx();
  return ctx;
}

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return allocate("_mlir_memref_to_llvm_alloc", minAlignment, size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  const char *entry = "_mlir_memref_to_llvm_aligned_alloc";
  if (alignment > maxAlignment)
    stepFatal(entry, "alignment %zu is above the 2 MiB limit", alignment);
  size_t rounded = minAlignment;
  while (rounded < alignment)
    rounded <<= 1;
  return allocate(entry, rounded, size);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  const char *entry = "_mlir_memref_to_llvm_free";
  if (!ptr)
    return;
  if (Device *device = currentStepDevice())
    if (device->stepFree(ptr))
      return;
  zshard_rt_mem_ctx *ctx = cpuBlockContext(ptr);
  if (!ctx)
    stepFatal(entry, "%p was not allocated by the runtime or was already freed",
              ptr);
  if (zshard_rt_cpu_free(ctx, ptr) != ZSHARD_RT_OK)
    stepFatal(entry, "%s", zshard_rt_last_error_message());
}
