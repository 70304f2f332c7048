//===- MemoryAccountingAbi.cpp - C entries of memory accounting -----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Argument checking for the zshard_rt_mem_* entries; the counting itself is
// in MemoryAccounting.cpp.
//
//===----------------------------------------------------------------------===//

#include "core/Error.h"
#include "core/MemoryAccounting.h"

#include "zshard/abi/MemoryCategory.h"

#include <new>
#include <string>

using namespace zshard::rt;

namespace {
/// Checks the arguments every per-category entry shares.
zshard_rt_status checkCategoryArgs(const char *entry,
                                   const zshard_rt_mem_ctx *ctx,
                                   zshard_rt_mem_category category) {
  if (!ctx)
    return nullArgument(entry, "ctx");
  if (!isValidCategory(category))
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": " +
                        std::to_string(static_cast<int>(category)) +
                        " is not a memory category");
  return ZSHARD_RT_OK;
}
} // namespace

extern "C" const char *
zshard_rt_mem_category_name(zshard_rt_mem_category category) {
  return zshard_abi::memCategoryName(category);
}

extern "C" zshard_rt_status zshard_rt_mem_ctx_create(zshard_rt_mem_ctx **out) {
  if (!out)
    return nullArgument("zshard_rt_mem_ctx_create", "out");
  *out = new (std::nothrow) zshard_rt_mem_ctx();
  if (!*out)
    return setError(ZSHARD_RT_ERROR_OUT_OF_MEMORY,
                    "zshard_rt_mem_ctx_create: out of memory");
  return ZSHARD_RT_OK;
}

extern "C" void zshard_rt_mem_ctx_destroy(zshard_rt_mem_ctx *ctx) {
  delete ctx;
}

extern "C" zshard_rt_status
zshard_rt_mem_record_alloc(zshard_rt_mem_ctx *ctx,
                           zshard_rt_mem_category category, uint64_t bytes) {
  if (zshard_rt_status s =
          checkCategoryArgs("zshard_rt_mem_record_alloc", ctx, category))
    return s;
  return ctx->recordAlloc(category, bytes);
}

extern "C" zshard_rt_status
zshard_rt_mem_record_free(zshard_rt_mem_ctx *ctx,
                          zshard_rt_mem_category category, uint64_t bytes) {
  if (zshard_rt_status s =
          checkCategoryArgs("zshard_rt_mem_record_free", ctx, category))
    return s;
  return ctx->recordFree(category, bytes);
}

extern "C" zshard_rt_status
zshard_rt_mem_live_bytes(const zshard_rt_mem_ctx *ctx,
                         zshard_rt_mem_category category, uint64_t *out) {
  if (zshard_rt_status s =
          checkCategoryArgs("zshard_rt_mem_live_bytes", ctx, category))
    return s;
  if (!out)
    return nullArgument("zshard_rt_mem_live_bytes", "out");
  *out = ctx->liveBytes(category);
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status
zshard_rt_mem_peak_bytes(const zshard_rt_mem_ctx *ctx,
                         zshard_rt_mem_category category, uint64_t *out) {
  if (zshard_rt_status s =
          checkCategoryArgs("zshard_rt_mem_peak_bytes", ctx, category))
    return s;
  if (!out)
    return nullArgument("zshard_rt_mem_peak_bytes", "out");
  *out = ctx->peakBytes(category);
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status
zshard_rt_mem_total_live_bytes(const zshard_rt_mem_ctx *ctx, uint64_t *out) {
  if (!ctx)
    return nullArgument("zshard_rt_mem_total_live_bytes", "ctx");
  if (!out)
    return nullArgument("zshard_rt_mem_total_live_bytes", "out");
  *out = ctx->totalLiveBytes();
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status
zshard_rt_mem_total_peak_bytes(const zshard_rt_mem_ctx *ctx, uint64_t *out) {
  if (!ctx)
    return nullArgument("zshard_rt_mem_total_peak_bytes", "ctx");
  if (!out)
    return nullArgument("zshard_rt_mem_total_peak_bytes", "out");
  *out = ctx->totalPeakBytes();
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status zshard_rt_mem_reset_peaks(zshard_rt_mem_ctx *ctx) {
  if (!ctx)
    return nullArgument("zshard_rt_mem_reset_peaks", "ctx");
  ctx->resetPeaks();
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status
zshard_rt_mem_timeline_start(zshard_rt_mem_ctx *ctx) {
  if (!ctx)
    return nullArgument("zshard_rt_mem_timeline_start", "ctx");
  try {
    ctx->startTimeline();
  } catch (const std::bad_alloc &) {
    return setError(ZSHARD_RT_ERROR_OUT_OF_MEMORY,
                    "zshard_rt_mem_timeline_start: out of memory");
  }
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status
zshard_rt_mem_timeline_stop(zshard_rt_mem_ctx *ctx) {
  if (!ctx)
    return nullArgument("zshard_rt_mem_timeline_stop", "ctx");
  ctx->stopTimeline();
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status
zshard_rt_mem_timeline_size(const zshard_rt_mem_ctx *ctx, uint64_t *out) {
  if (!ctx)
    return nullArgument("zshard_rt_mem_timeline_size", "ctx");
  if (!out)
    return nullArgument("zshard_rt_mem_timeline_size", "out");
  *out = ctx->timelineSize();
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status
zshard_rt_mem_timeline_entry(const zshard_rt_mem_ctx *ctx, uint64_t index,
                             double *seconds, uint64_t *live) {
  const char *entry = "zshard_rt_mem_timeline_entry";
  if (!ctx)
    return nullArgument(entry, "ctx");
  if (!seconds)
    return nullArgument(entry, "seconds");
  if (!live)
    return nullArgument(entry, "live");
  zshard_rt_mem_ctx::TimelineEntry found;
  if (!ctx->timelineEntry(index, found))
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": index " + std::to_string(index) +
                        " is past the " + std::to_string(ctx->timelineSize()) +
                        " entries");
  *seconds = found.seconds;
  for (size_t c = 0; c < found.live.size(); ++c)
    live[c] = found.live[c];
  return ZSHARD_RT_OK;
}
