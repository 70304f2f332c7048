//===- Alloc.cpp - Aligned host allocation with accounting ----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Every block carries a header just below the pointer handed out, so that
// zshard_rt_cpu_free() needs only the pointer (as a memref dealloc has) and
// can check the block's context:
//
//   base                      ptr (aligned)
//   | padding ... | BlockHeader | bytes ...
//
// The bytes recorded in the accounting are the bytes asked for; the header and
// padding are the runtime's own overhead and are not counted.
//
//===----------------------------------------------------------------------===//

#include "cpu/Alloc.h"
#include "core/Error.h"
#include "core/MemoryAccounting.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace zshard::rt;

namespace {

/// Marks a live block; cleared when the block is freed.
constexpr uint64_t blockMagic = 0x7a73686172645254ull; // "zshardRT"

/// The largest alignment accepted: a 2 MiB huge page.
constexpr uint64_t maxAlignment = uint64_t(1) << 21;

struct BlockHeader {
  uint64_t magic;
  zshard_rt_mem_ctx *ctx;
  void *base;
  uint64_t bytes;
  int64_t category;
};

bool isPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

uint64_t roundUp(uint64_t x, uint64_t alignment) {
  return (x + alignment - 1) & ~(alignment - 1);
}

BlockHeader *headerOf(void *ptr) {
  return reinterpret_cast<BlockHeader *>(static_cast<char *>(ptr) -
                                         sizeof(BlockHeader));
}

} // namespace

zshard_rt_mem_ctx *zshard::rt::cpuBlockContext(const void *ptr) {
  if (!ptr)
    return nullptr;
  const BlockHeader *header = headerOf(const_cast<void *>(ptr));
  return header->magic == blockMagic ? header->ctx : nullptr;
}

extern "C" zshard_rt_status
zshard_rt_cpu_alloc(zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category,
                    uint64_t bytes, uint64_t alignment, void **out) {
  const char *entry = "zshard_rt_cpu_alloc";
  if (!out)
    return nullArgument(entry, "out");
  *out = nullptr;
  if (!ctx)
    return nullArgument(entry, "ctx");
  if (!isValidCategory(category))
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": " +
                        std::to_string(static_cast<int>(category)) +
                        " is not a memory category");
  if (alignment == 0)
    alignment = ZSHARD_RT_CPU_DEFAULT_ALIGNMENT;
  if (!isPowerOfTwo(alignment) || alignment > maxAlignment)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": alignment " +
                        std::to_string(alignment) +
                        " is not a power of two up to 2 MiB");
  // posix_memalign needs a multiple of sizeof(void *); the header needs 8.
  alignment = std::max<uint64_t>(alignment, alignof(BlockHeader));
  alignment = std::max<uint64_t>(alignment, sizeof(void *));

  uint64_t headerSpace = roundUp(sizeof(BlockHeader), alignment);
  if (bytes > UINT64_MAX - headerSpace - alignment)
    return setError(ZSHARD_RT_ERROR_OUT_OF_MEMORY,
                    std::string(entry) + ": " + std::to_string(bytes) +
                        " bytes cannot be allocated");
  uint64_t total = roundUp(headerSpace + bytes, alignment);

  void *base = nullptr;
  if (total > SIZE_MAX || posix_memalign(&base, alignment, total) != 0)
    return setError(ZSHARD_RT_ERROR_OUT_OF_MEMORY,
                    std::string(entry) + ": out of memory allocating " +
                        std::to_string(bytes) + " bytes for '" +
                        zshard_rt_mem_category_name(category) + "'");
  if (zshard_rt_status s = ctx->recordAlloc(category, bytes)) {
    std::free(base);
    return s;
  }

  void *ptr = static_cast<char *>(base) + headerSpace;
  *headerOf(ptr) =
      BlockHeader{blockMagic, ctx, base, bytes, static_cast<int64_t>(category)};
  *out = ptr;
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status zshard_rt_cpu_free(zshard_rt_mem_ctx *ctx,
                                               void *ptr) {
  const char *entry = "zshard_rt_cpu_free";
  if (!ptr)
    return ZSHARD_RT_OK;
  if (!ctx)
    return nullArgument(entry, "ctx");
  BlockHeader *header = headerOf(ptr);
  if (header->magic != blockMagic)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) +
                        ": pointer was not allocated by zshard_rt_cpu_alloc "
                        "or was already freed");
  if (header->ctx != ctx)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) +
                        ": block was allocated with another context");
  auto category = static_cast<zshard_rt_mem_category>(header->category);
  if (zshard_rt_status s = ctx->recordFree(category, header->bytes))
    return s;
  header->magic = 0;
  std::free(header->base);
  return ZSHARD_RT_OK;
}
