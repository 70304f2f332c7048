//===- Report.h - What zshard-run prints ------------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Per-step lines ("step 3/300  loss 2.718282  tok/s 12345"): on a terminal
/// one live line rewritten in place (at most ten times a second) and a human
/// summary at the end; otherwise one plain line per step. Always, last, one
/// line of JSON with the run's figures. --log-json writes one JSON object per
/// step to a file.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_REPORT_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_REPORT_H

#include "zshard/runtime/zshard_rt.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace zshard::run {

/// One step as measured.
struct StepRecord {
  int64_t step = 0;
  double loss = 0;
  /// The lr the step got (its schedule's value, before rounding to the
  /// hyper's dtype); none for a step without the hyper lr.
  std::optional<double> lr;
  double seconds = 0; ///< The step call alone (of the slowest rank).
  /// Each rank's step time, and the part of it the rank's thread was blocked
  /// in collectives (exposed communication), by rank.
  std::vector<double> rankSeconds;
  std::vector<double> rankExposedSeconds;
  /// After a step that evaluated (--eval-data, Eval.h): the eval loss and
  /// the eval's time (of this process's rank 0).
  std::optional<double> evalLoss;
  double evalSeconds = 0;
};

/// Peak memory of one rank: per category, and of the total.
struct RankPeaks {
  std::array<uint64_t, ZSHARD_RT_MEM_NUM_CATEGORIES> bytes{};
  uint64_t total = 0;
};

/// The whole run.
struct RunSummary {
  int64_t steps = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
  std::optional<double> finalLoss;
  /// The eval loss of the last eval, if any ran.
  std::optional<double> finalEvalLoss;
  double stepSeconds = 0; ///< Sum over steps (of the slowest rank's time).
  /// Sum over ranks and steps of each rank's own step time.
  double rankStepSeconds = 0;
  double sgemmSeconds = 0; ///< Of which in zshard_rt_step_sgemm.
  double sgemmFlops = 0;
  /// Of which blocked in collectives, over ranks.
  double exposedCommSeconds = 0;
  /// Each rank's step time and exposed communication over the run.
  std::vector<double> rankStepSecondsOf;
  std::vector<double> rankExposedCommSeconds;
  double wallSeconds = 0; ///< Everything, loading included.
  /// The largest peak of any rank, per category and of the total.
  std::array<uint64_t, ZSHARD_RT_MEM_NUM_CATEGORIES> peakBytes{};
  uint64_t peakTotalBytes = 0;
  int64_t ranks = 1;
  std::string backend = "local";
  std::vector<RankPeaks> rankPeaks; ///< By rank.
  /// The lr given to the step and where it came from ("--lr", "artifact",
  /// "default"); none for a step without the hyper lr.
  std::optional<double> lr;
  std::string lrSource;
};

/// Throughput: "tok/s" with B*T tokens per step, "samples/s" with B, or
/// "steps/s".
struct Throughput {
  std::string unit = "steps/s";
  double perStep = 1;
};

/// A file of lines, each flushed as written (--log, and under --log-json).
class TextLog {
public:
  /// Opens \p path for writing; throws a Failure naming it.
  explicit TextLog(const std::string &path);
  ~TextLog();
  TextLog(const TextLog &) = delete;
  TextLog &operator=(const TextLog &) = delete;
  /// Writes \p line and a newline; throws a Failure naming the file.
  void write(const std::string &line);

private:
  std::string path;
  std::FILE *file = nullptr;
};

/// The per-step lines and the human summary on stdout; with a TextLog, each
/// step's line written there as well.
class Progress {
public:
  Progress(bool quiet, Throughput throughput, int64_t lastStep,
           TextLog *textLog = nullptr);
  void step(const StepRecord &record);
  /// A line of its own between the step lines (e.g. a saved checkpoint):
  /// printed unless quiet, and written to --log.
  void note(const std::string &text);
  /// Ends the live line and, on a terminal, prints the human summary.
  void finish(const RunSummary &summary);

private:
  std::string line(const StepRecord &record) const;

  bool quiet;
  bool live;
  Throughput throughput;
  int64_t lastStep;
  TextLog *textLog;
  bool pending = false;
  std::chrono::steady_clock::time_point lastDraw;
};

/// --log-json: one JSON object per line, {"step":3,"loss":2.71,"lr":0.001,
/// "ms":1.2,"tokens_per_s":1.2e5,"exposed_comm_ms":0.4,"rank_ms":[..],
/// "rank_exposed_comm_ms":[..]} ("lr" only for a step with the hyper lr;
/// "eval_loss" and "eval_ms" only after a step that evaluated;
/// the rate is the run's Throughput: tokens_per_s, samples_per_s or
/// steps_per_s, of the global batch over the slowest rank's step time).
class StepLog {
public:
  /// Opens \p path for writing; throws a Failure naming it.
  StepLog(const std::string &path, Throughput throughput)
      : file(path), throughput(std::move(throughput)) {}
  void write(const StepRecord &record);

private:
  TextLog file;
  Throughput throughput;
};

/// The final JSON line: {"steps":N,"first_step":..,"last_step":..,
/// "final_loss":..,"mean_step_ms":..,"sgemm_fraction":..,"sgemm_gflops":..,
/// "exposed_comm_fraction":..,"wall_s":..,"peak_bytes":{<category>:..,...,
/// "total":..},"ranks":N,"backend":"local"|"mpi","rank_peak_bytes":[{
/// <category>:..,"total":..},...],"rank_exposed_comm_s":[..],
/// "rank_exposed_comm_fraction":[..],"lr":..,"lr_source":"--lr"|"artifact"|
/// "default"}; peak_bytes is the largest of the ranks' peaks; lr and
/// lr_source only for a step with the hyper lr; "final_eval_loss" (before
/// "lr") only for a run that evaluated.
std::string summaryJson(const RunSummary &summary);

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_REPORT_H
