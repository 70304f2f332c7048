//===- MemoryAccounting.h - Live and peak bytes per category ----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The accounting context behind the opaque zshard_rt_mem_ctx of the C ABI.
/// One mutex guards all counters of a context, so every query sees one
/// consistent state and the total peak is the exact peak of the sum.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CORE_MEMORYACCOUNTING_H
#define ZSHARD_RUNTIME_LIB_CORE_MEMORYACCOUNTING_H

#include "zshard/runtime/zshard_rt.h"

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

namespace zshard::rt {

/// Whether \p category names a real category (not the count, not garbage).
bool isValidCategory(zshard_rt_mem_category category);

/// Whether \p category is device memory, counted in the totals (the host
/// pool, ZSHARD_RT_MEM_HOST_OFFLOAD, is not).
bool countsInTotal(zshard_rt_mem_category category);

} // namespace zshard::rt

/// Live and peak bytes per category, and the peak of their total.
struct zshard_rt_mem_ctx {
public:
  /// Adds \p bytes to \p category (which must be valid). Fails with
  /// ZSHARD_RT_ERROR_ACCOUNTING, changing nothing, on counter overflow.
  zshard_rt_status recordAlloc(zshard_rt_mem_category category, uint64_t bytes);

  /// Removes \p bytes from \p category (which must be valid). Fails with
  /// ZSHARD_RT_ERROR_ACCOUNTING, changing nothing, when fewer are live.
  zshard_rt_status recordFree(zshard_rt_mem_category category, uint64_t bytes);

  uint64_t liveBytes(zshard_rt_mem_category category) const;
  uint64_t peakBytes(zshard_rt_mem_category category) const;
  uint64_t totalLiveBytes() const;
  uint64_t totalPeakBytes() const;

  /// Sets every peak to the current live value.
  void resetPeaks();

  static constexpr int numCategories = ZSHARD_RT_MEM_NUM_CATEGORIES;

  /// One entry of the memory timeline: the live bytes after a change.
  struct TimelineEntry {
    double seconds; ///< zshard_rt_clock_seconds()
    std::array<uint64_t, numCategories> live;
  };

  /// Drops the timeline and starts recording one, beginning with the state
  /// now. Throws std::bad_alloc.
  void startTimeline();
  /// Stops recording (the entries stay).
  void stopTimeline();
  uint64_t timelineSize() const;
  /// Copies entry \p index to \p out; false when there is no such entry.
  bool timelineEntry(uint64_t index, TimelineEntry &out) const;

private:
  /// Appends the state now when recording (under the mutex).
  void recordTimeline();

  mutable std::mutex mutex;
  std::array<uint64_t, numCategories> live{};
  std::array<uint64_t, numCategories> peak{};
  uint64_t totalLive = 0;
  uint64_t totalPeak = 0;
  bool recording = false;
  std::vector<TimelineEntry> timeline;
};

#endif // ZSHARD_RUNTIME_LIB_CORE_MEMORYACCOUNTING_H
