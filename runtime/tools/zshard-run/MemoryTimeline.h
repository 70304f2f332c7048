//===- MemoryTimeline.h - zshard-run --memory-timeline ----------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// --memory-timeline: rank 0's memory context records its live bytes per
/// category at every allocation and free of one step
/// (zshard_rt_mem_timeline_start/stop around the step call), written as
///
///   {"step":10,"rank":0,"step_seconds":0.0012,
///    "categories":["parameters",...,"other","host_offload"],
///    "events":[{"t":0.0,"live":{"parameters":..,...},"total":..},...],
///    "peak":{"parameters":..,...,"total":..}}
///
/// "t" is seconds from the start of the step call; the first event is the
/// state at the start. "peak" is each category's highest live value over the
/// events, and "total" the highest sum (the peak of the sum). Totals are of
/// device memory: the host pool (host_offload) is listed but not added.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_MEMORYTIMELINE_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_MEMORYTIMELINE_H

#include "zshard/runtime/zshard_rt.h"

#include <cstdint>
#include <string>

namespace zshard::run {

/// The timeline \p ctx recorded for step \p step, which began at \p begin and
/// ended at \p end (zshard_rt_clock_seconds()), as the JSON text above.
std::string memoryTimelineJson(const zshard_rt_mem_ctx *ctx, int64_t step,
                               int rank, double begin, double end);

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_MEMORYTIMELINE_H
