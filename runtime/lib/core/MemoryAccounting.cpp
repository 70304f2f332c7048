//===- MemoryAccounting.cpp - Live and peak bytes per category ------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/MemoryAccounting.h"

#include "core/Error.h"

#include "zshard/abi/MemoryCategory.h"

#include <algorithm>
#include <limits>
#include <new>
#include <string>

using namespace zshard::rt;

bool zshard::rt::isValidCategory(zshard_rt_mem_category category) {
  return static_cast<int>(category) >= 0 &&
         static_cast<int>(category) < ZSHARD_RT_MEM_NUM_CATEGORIES;
}

bool zshard::rt::countsInTotal(zshard_rt_mem_category category) {
  return zshard_abi::isDeviceMemCategory(category);
}

zshard_rt_status zshard_rt_mem_ctx::recordAlloc(zshard_rt_mem_category category,
                                                uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  uint64_t &categoryLive = live[category];
  // Checking the larger counter covers both.
  if (bytes >
      std::numeric_limits<uint64_t>::max() - std::max(totalLive, categoryLive))
    return setError(ZSHARD_RT_ERROR_ACCOUNTING,
                    "zshard_rt_mem_record_alloc: " + std::to_string(bytes) +
                        " bytes in '" + zshard_rt_mem_category_name(category) +
                        "' overflow the live byte counter");
  categoryLive += bytes;
  if (countsInTotal(category))
    totalLive += bytes;
  peak[category] = std::max(peak[category], categoryLive);
  totalPeak = std::max(totalPeak, totalLive);
  if (recording)
    recordTimeline();
  return ZSHARD_RT_OK;
}

zshard_rt_status zshard_rt_mem_ctx::recordFree(zshard_rt_mem_category category,
                                               uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  uint64_t &categoryLive = live[category];
  if (bytes > categoryLive)
    return setError(ZSHARD_RT_ERROR_ACCOUNTING,
                    "zshard_rt_mem_record_free: freeing " +
                        std::to_string(bytes) + " bytes from '" +
                        zshard_rt_mem_category_name(category) + "' with only " +
                        std::to_string(categoryLive) + " bytes live");
  categoryLive -= bytes;
  if (countsInTotal(category))
    totalLive -= bytes;
  if (recording)
    recordTimeline();
  return ZSHARD_RT_OK;
}

uint64_t zshard_rt_mem_ctx::liveBytes(zshard_rt_mem_category category) const {
  std::lock_guard<std::mutex> lock(mutex);
  return live[category];
}

uint64_t zshard_rt_mem_ctx::peakBytes(zshard_rt_mem_category category) const {
  std::lock_guard<std::mutex> lock(mutex);
  return peak[category];
}

uint64_t zshard_rt_mem_ctx::totalLiveBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return totalLive;
}

uint64_t zshard_rt_mem_ctx::totalPeakBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return totalPeak;
}

void zshard_rt_mem_ctx::resetPeaks() {
  std::lock_guard<std::mutex> lock(mutex);
  peak = live;
  totalPeak = totalLive;
}

void zshard_rt_mem_ctx::recordTimeline() {
  try {
    timeline.push_back({zshard_rt_clock_seconds(), live});
  } catch (const std::bad_alloc &) {
    recording = false; // a timeline cut short, not a failed allocation
  }
}

void zshard_rt_mem_ctx::startTimeline() {
  std::lock_guard<std::mutex> lock(mutex);
  timeline.clear();
  timeline.reserve(1024);
  timeline.push_back({zshard_rt_clock_seconds(), live});
  recording = true;
}

void zshard_rt_mem_ctx::stopTimeline() {
  std::lock_guard<std::mutex> lock(mutex);
  recording = false;
}

uint64_t zshard_rt_mem_ctx::timelineSize() const {
  std::lock_guard<std::mutex> lock(mutex);
  return timeline.size();
}

bool zshard_rt_mem_ctx::timelineEntry(uint64_t index,
                                      TimelineEntry &out) const {
  std::lock_guard<std::mutex> lock(mutex);
  if (index >= timeline.size())
    return false;
  out = timeline[size_t(index)];
  return true;
}
