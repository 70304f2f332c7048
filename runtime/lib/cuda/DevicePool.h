//===- DevicePool.h - Caching pool of CUDA device memory --------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Device memory of one CUDA device for step buffers and the compiled step's
/// temporaries. cudaMalloc is slow and synchronizes the device, and a step
/// allocates and frees the same sizes every iteration, so freed blocks stay
/// in the pool, by size, for the next request of that size class:
///
///  - sizes are rounded up to 512 bytes below 1 MiB and to 2 MiB above;
///  - a request takes a cached block of its size class, or of up to 1/8 more
///    above 1 MiB, else cudaMalloc; when cudaMalloc runs out, the cache goes
///    back to the driver (cudaFree) and the request is tried once more.
///
/// Blocks are used in the order of one stream (the device's compute stream):
/// a block freed while queued kernels still use it is only handed out again
/// to work queued after them on that stream. Work on other streams (NCCL on
/// the communication stream) is ordered back into the compute stream by
/// events before its buffers are freed (comm/nccl/NcclCommunicator.cpp).
///
/// Every block is charged to a memory context and category (the bytes asked
/// for, not the rounding) while it is live; cached blocks are charged to
/// nobody. Thread-safe.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CUDA_DEVICEPOOL_H
#define ZSHARD_RUNTIME_LIB_CUDA_DEVICEPOOL_H

#include "zshard/runtime/zshard_rt.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace zshard::rt {

class DevicePool {
public:
  /// A pool for the CUDA device \p ordinal (current on the calling thread
  /// whenever the pool is used), named \p deviceName in messages.
  DevicePool(int ordinal, std::string deviceName);
  /// Gives every cached block back (cudaFree). Live blocks are leaked.
  ~DevicePool();
  DevicePool(const DevicePool &) = delete;
  DevicePool &operator=(const DevicePool &) = delete;

  /// \p bytes aligned to \p alignment (a power of two up to 2 MiB; at least
  /// 256), charged to \p category of \p ctx. Throws a DeviceFailure:
  /// OUT_OF_MEMORY (naming the bytes, the category and the device's free
  /// memory), ACCOUNTING, DEVICE.
  void *allocate(zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category,
                 uint64_t bytes, uint64_t alignment = 256);
  /// Frees a block of allocate() and returns true; false (nothing done) when
  /// \p ptr is not a live block of this pool.
  bool free(void *ptr);
  /// Whether \p ptr is a live block of this pool.
  bool owns(const void *ptr) const;
  /// Gives every cached block back to the driver.
  void releaseCached();

  /// Bytes held from the driver, live and cached (rounded sizes).
  uint64_t reservedBytes() const;
  /// Bytes of the cached blocks.
  uint64_t cachedBytes() const;

  /// The size class of a request of \p bytes.
  static uint64_t roundedSize(uint64_t bytes);

private:
  struct Block {
    void *base;     ///< What cudaMalloc returned.
    uint64_t size;  ///< The rounded size of base.
    uint64_t bytes; ///< What was asked for, as charged.
    zshard_rt_mem_ctx *ctx;
    zshard_rt_mem_category category;
  };

  /// A cached block of at least \p size (and at most a little more), or
  /// cudaMalloc; NULL when the device is out of memory.
  void *take(uint64_t size, uint64_t &taken);
  void releaseCachedLocked();

  int ordinal;
  std::string deviceName;
  mutable std::mutex mutex;
  std::unordered_map<void *, Block> live; // by the pointer handed out
  std::multimap<uint64_t, void *> cached; // rounded size -> base
  uint64_t reserved = 0;
  uint64_t cachedTotal = 0;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CUDA_DEVICEPOOL_H
