//===- TraceFile.h - zshard-run --trace -------------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// --trace: each rank records its steps and, through a zshard_rt_trace
/// current on its thread while the step runs, the spans of its collectives.
/// After the run every rank's spans are gathered to rank 0 (a collective, on
/// both backends), which writes one Chrome/Perfetto trace (Trace Event
/// Format JSON): per rank (pid) a "compute" lane (tid 0: the steps and,
/// inside them, the time blocked in collectives, "wait <unit> <kind>") and a
/// "communication" lane (tid 1, more when collectives of different groups
/// overlap: each collective from its begin to its completion, "<kind>
/// <unit>").
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_TRACEFILE_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_TRACEFILE_H

#include "zshard/runtime/zshard_rt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zshard::run {

class Team;

/// One span of a rank, as gathered (trivially copyable).
struct TraceSpan {
  enum Type : int32_t { Step = 0, Blocked = 1, Collective = 2 };
  int32_t type = Step;
  int32_t kind = 0;    ///< zshard_rt_collective_kind (not for a step)
  int32_t unit = -1;   ///< index in the manifest's units, or -1
  int32_t started = 0; ///< a started collective (not for a step)
  int64_t step = 0;    ///< the step the span belongs to
  uint64_t bytes = 0;
  double begin = 0; ///< seconds from the rank's origin
  double end = 0;
  double exposed = 0; ///< steps: seconds blocked in collectives
};

/// One rank's trace while it runs.
class RankTrace {
public:
  /// \p origin: the time (zshard_rt_clock_seconds()) spans count from.
  explicit RankTrace(double origin);
  ~RankTrace();
  RankTrace(const RankTrace &) = delete;
  RankTrace &operator=(const RankTrace &) = delete;

  /// The runtime's trace, current on the rank's thread while a step runs.
  zshard_rt_trace *get() const { return trace; }

  /// Records step \p step from \p begin to \p end (clock seconds) and moves
  /// the runtime's events of that step into the spans.
  void endStep(int64_t step, double begin, double end, double exposed);

  const std::vector<TraceSpan> &spans() const { return all; }

private:
  zshard_rt_trace *trace = nullptr;
  double origin;
  std::vector<TraceSpan> all;
};

/// What the file says about the run besides the spans.
struct TraceInfo {
  std::string artifact;
  std::string backend;
  std::vector<std::string> unitNames; ///< by index
  double linkGbps = 0;
  double linkLatencyUs = 0;
};

/// Collective: every rank's \p mine, in rank order (on every rank).
std::vector<std::vector<TraceSpan>>
gatherSpans(Team &team, const std::vector<TraceSpan> &mine);

/// The Trace Event Format JSON of \p ranks' spans.
std::string traceJson(const std::vector<std::vector<TraceSpan>> &ranks,
                      const TraceInfo &info);

/// Writes \p text to \p path whole (through a temporary file); throws a
/// Failure naming the path.
void writeTextFile(const std::string &path, const std::string &text);

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_TRACEFILE_H
