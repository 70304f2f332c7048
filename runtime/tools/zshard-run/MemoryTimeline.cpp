//===- MemoryTimeline.cpp - zshard-run --memory-timeline ------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "MemoryTimeline.h"

#include "core/Failure.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>

using namespace zshard;
using namespace zshard::run;
using Json = nlohmann::ordered_json;

namespace {
const char *categoryName(int category) {
  return zshard_rt_mem_category_name(
      static_cast<zshard_rt_mem_category>(category));
}
} // namespace

std::string zshard::run::memoryTimelineJson(const zshard_rt_mem_ctx *ctx,
                                            int64_t step, int rank,
                                            double begin, double end) {
  constexpr int numCategories = ZSHARD_RT_MEM_NUM_CATEGORIES;
  uint64_t size = 0;
  if (zshard_rt_mem_timeline_size(ctx, &size) != ZSHARD_RT_OK)
    rt::fail(std::string("--memory-timeline: ") +
             zshard_rt_last_error_message());
  std::array<uint64_t, numCategories> peak{};
  uint64_t peakTotal = 0;
  Json events = Json::array();
  for (uint64_t i = 0; i < size; ++i) {
    double seconds = 0;
    std::array<uint64_t, numCategories> live{};
    if (zshard_rt_mem_timeline_entry(ctx, i, &seconds, live.data()) !=
        ZSHARD_RT_OK)
      rt::fail(std::string("--memory-timeline: ") +
               zshard_rt_last_error_message());
    Json byCategory = Json::object();
    uint64_t total = 0;
    for (int c = 0; c < numCategories; ++c) {
      byCategory[categoryName(c)] = live[size_t(c)];
      peak[size_t(c)] = std::max(peak[size_t(c)], live[size_t(c)]);
      // The device total: the host pool is listed, not added.
      if (c != ZSHARD_RT_MEM_HOST_OFFLOAD)
        total += live[size_t(c)];
    }
    peakTotal = std::max(peakTotal, total);
    events.push_back({{"t", std::max(0.0, seconds - begin)},
                      {"live", std::move(byCategory)},
                      {"total", total}});
  }
  Json categories = Json::array(), peaks = Json::object();
  for (int c = 0; c < numCategories; ++c) {
    categories.push_back(categoryName(c));
    peaks[categoryName(c)] = peak[size_t(c)];
  }
  peaks["total"] = peakTotal;
  Json file = {{"step", step},
               {"rank", rank},
               {"step_seconds", end - begin},
               {"categories", std::move(categories)},
               {"events", std::move(events)},
               {"peak", std::move(peaks)}};
  return file.dump() + "\n";
}
