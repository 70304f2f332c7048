//===- Trace.cpp - Spans of collectives for a launcher to draw ------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The trace (Trace.h), the calling thread's current trace, the clock, and
// their C entries.
//
//===----------------------------------------------------------------------===//

#include "core/Trace.h"

#include "core/Error.h"

#include <chrono>
#include <new>
#include <string>

using namespace zshard::rt;

namespace {
/// The trace set by zshard_rt_set_current_trace on this thread, or NULL.
thread_local zshard_rt_trace *currentTrace = nullptr;
} // namespace

void zshard_rt_trace::record(const zshard_rt_trace_event &event) {
  std::lock_guard<std::mutex> lock(mutex);
  events.push_back(event);
}

uint64_t zshard_rt_trace::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return events.size();
}

bool zshard_rt_trace::get(uint64_t index, zshard_rt_trace_event &out) const {
  std::lock_guard<std::mutex> lock(mutex);
  if (index >= events.size())
    return false;
  out = events[size_t(index)];
  return true;
}

void zshard_rt_trace::clear() {
  std::lock_guard<std::mutex> lock(mutex);
  events.clear();
}

extern "C" double zshard_rt_clock_seconds(void) {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

extern "C" const char *zshard_rt_collective_kind_name(int32_t kind) {
  switch (kind) {
  case ZSHARD_RT_COLLECTIVE_ALL_GATHER:
    return "all_gather";
  case ZSHARD_RT_COLLECTIVE_REDUCE_SCATTER:
    return "reduce_scatter";
  case ZSHARD_RT_COLLECTIVE_ALL_REDUCE:
    return "all_reduce";
  case ZSHARD_RT_COLLECTIVE_BARRIER:
    return "barrier";
  default:
    return nullptr;
  }
}

extern "C" zshard_rt_status zshard_rt_trace_create(zshard_rt_trace **out) {
  if (!out)
    return nullArgument("zshard_rt_trace_create", "out");
  *out = new (std::nothrow) zshard_rt_trace();
  if (!*out)
    return setError(ZSHARD_RT_ERROR_OUT_OF_MEMORY,
                    "zshard_rt_trace_create: out of memory");
  return ZSHARD_RT_OK;
}

extern "C" void zshard_rt_trace_destroy(zshard_rt_trace *trace) {
  delete trace;
}

extern "C" void zshard_rt_set_current_trace(zshard_rt_trace *trace) {
  currentTrace = trace;
}

extern "C" zshard_rt_trace *zshard_rt_current_trace(void) {
  return currentTrace;
}

extern "C" zshard_rt_status
zshard_rt_trace_record(zshard_rt_trace *trace,
                       const zshard_rt_trace_event *event) {
  const char *entry = "zshard_rt_trace_record";
  if (!trace)
    return nullArgument(entry, "trace");
  if (!event)
    return nullArgument(entry, "event");
  if (event->lane != ZSHARD_RT_TRACE_COMPUTE &&
      event->lane != ZSHARD_RT_TRACE_COMMUNICATION)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": lane " +
                        std::to_string(event->lane) + " is not a trace lane");
  if (!zshard_rt_collective_kind_name(event->kind))
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": kind " +
                        std::to_string(event->kind) +
                        " is not a collective kind");
  try {
    trace->record(*event);
  } catch (const std::bad_alloc &) {
    return setError(ZSHARD_RT_ERROR_OUT_OF_MEMORY,
                    std::string(entry) + ": out of memory");
  }
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status
zshard_rt_trace_event_count(const zshard_rt_trace *trace, uint64_t *out) {
  if (!trace)
    return nullArgument("zshard_rt_trace_event_count", "trace");
  if (!out)
    return nullArgument("zshard_rt_trace_event_count", "out");
  *out = trace->size();
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status
zshard_rt_trace_get_event(const zshard_rt_trace *trace, uint64_t index,
                          zshard_rt_trace_event *out) {
  const char *entry = "zshard_rt_trace_get_event";
  if (!trace)
    return nullArgument(entry, "trace");
  if (!out)
    return nullArgument(entry, "out");
  if (!trace->get(index, *out))
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": index " + std::to_string(index) +
                        " is past the " + std::to_string(trace->size()) +
                        " events");
  return ZSHARD_RT_OK;
}

extern "C" zshard_rt_status zshard_rt_trace_clear(zshard_rt_trace *trace) {
  if (!trace)
    return nullArgument("zshard_rt_trace_clear", "trace");
  trace->clear();
  return ZSHARD_RT_OK;
}
