//===- Trace.h - Spans of collectives for a launcher to draw ----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The trace behind the opaque zshard_rt_trace of the C ABI: a list of
/// events under one mutex, appended to by a rank's thread and by the progress
/// threads of its groups, drained by the launcher between steps.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CORE_TRACE_H
#define ZSHARD_RUNTIME_LIB_CORE_TRACE_H

#include "zshard/runtime/zshard_rt.h"

#include <cstdint>
#include <mutex>
#include <vector>

struct zshard_rt_trace {
public:
  /// Appends \p event; throws std::bad_alloc when out of memory.
  void record(const zshard_rt_trace_event &event);
  uint64_t size() const;
  /// Copies event \p index to \p out; false when there is no such event.
  bool get(uint64_t index, zshard_rt_trace_event &out) const;
  void clear();

private:
  mutable std::mutex mutex;
  std::vector<zshard_rt_trace_event> events;
};

#endif // ZSHARD_RUNTIME_LIB_CORE_TRACE_H
