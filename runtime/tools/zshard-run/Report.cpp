//===- Report.cpp - What zshard-run prints --------------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "core/Failure.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include <unistd.h>

using namespace zshard;
using namespace zshard::run;
using Json = nlohmann::ordered_json;

namespace {

/// A float for JSON: null when not finite (JSON has no NaN).
Json number(double value) {
  return std::isfinite(value) ? Json(value) : Json(nullptr);
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit ? "%.1f %s" : "%.0f %s", value,
                units[unit]);
  return text;
}

} // namespace

TextLog::TextLog(const std::string &path) : path(path) {
  file = std::fopen(path.c_str(), "w");
  if (!file)
    rt::fail(path + ": cannot write: " + std::strerror(errno));
}

TextLog::~TextLog() {
  if (file)
    std::fclose(file);
}

void TextLog::write(const std::string &line) {
  std::string text = line + "\n";
  if (std::fwrite(text.data(), 1, text.size(), file) != text.size() ||
      std::fflush(file) != 0)
    rt::fail(path + ": cannot write: " + std::strerror(errno));
}

Progress::Progress(bool quiet, Throughput throughput, int64_t lastStep,
                   TextLog *textLog)
    : quiet(quiet), live(!quiet && isatty(STDOUT_FILENO)),
      throughput(std::move(throughput)), lastStep(lastStep), textLog(textLog) {}

std::string Progress::line(const StepRecord &record) const {
  double rate = record.seconds > 0 ? throughput.perStep / record.seconds : 0;
  char text[160];
  std::snprintf(text, sizeof(text), "step %lld/%lld  loss %.6f  %s %.0f",
                static_cast<long long>(record.step),
                static_cast<long long>(lastStep), record.loss,
                throughput.unit.c_str(), rate);
  std::string out = text;
  if (record.evalLoss) {
    std::snprintf(text, sizeof(text), "  eval_loss %.6f", *record.evalLoss);
    out += text;
  }
  return out;
}

void Progress::step(const StepRecord &record) {
  if (textLog)
    textLog->write(line(record));
  if (quiet)
    return;
  if (!live) {
    std::printf("%s\n", line(record).c_str());
    std::fflush(stdout);
    return;
  }
  auto now = std::chrono::steady_clock::now();
  // A step that evaluated is always drawn.
  bool last = record.step == lastStep || record.evalLoss;
  if (!last && pending && now - lastDraw < std::chrono::milliseconds(100))
    return;
  std::printf("\r%-72s", line(record).c_str());
  std::fflush(stdout);
  pending = true;
  lastDraw = now;
}

void Progress::note(const std::string &text) {
  if (textLog)
    textLog->write(text);
  if (quiet)
    return;
  if (live && pending)
    std::printf("\n");
  pending = false;
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
}

void Progress::finish(const RunSummary &summary) {
  if (!live)
    return;
  if (pending)
    std::printf("\n");
  double meanMs =
      summary.steps ? 1e3 * summary.stepSeconds / double(summary.steps) : 0;
  double sgemmShare = summary.rankStepSeconds > 0
                          ? summary.sgemmSeconds / summary.rankStepSeconds
                          : 0;
  double commShare = summary.rankStepSeconds > 0
                         ? summary.exposedCommSeconds / summary.rankStepSeconds
                         : 0;
  std::printf("done: %lld steps in %.2f s, final loss %s, mean step %.3f ms, "
              "sgemm %.0f%% of step time, exposed communication %.0f%%, "
              "peak memory %s%s\n",
              static_cast<long long>(summary.steps), summary.wallSeconds,
              summary.finalLoss ? std::to_string(*summary.finalLoss).c_str()
                                : "-",
              meanMs, 100 * sgemmShare, 100 * commShare,
              formatBytes(summary.peakTotalBytes).c_str(),
              summary.ranks > 1 ? " (the largest rank's)" : "");
  std::fflush(stdout);
}

void StepLog::write(const StepRecord &record) {
  Json rankMs = Json::array(), rankExposedMs = Json::array();
  double exposedMs = 0;
  for (double seconds : record.rankSeconds)
    rankMs.push_back(seconds * 1e3);
  for (double seconds : record.rankExposedSeconds) {
    rankExposedMs.push_back(seconds * 1e3);
    exposedMs = std::max(exposedMs, seconds * 1e3);
  }
  Json object = {{"step", record.step}, {"loss", number(record.loss)}};
  if (record.lr)
    object["lr"] = number(*record.lr);
  object["ms"] = record.seconds * 1e3;
  const char *rate = throughput.unit == "tok/s"       ? "tokens_per_s"
                     : throughput.unit == "samples/s" ? "samples_per_s"
                                                      : "steps_per_s";
  object[rate] = number(record.seconds > 0 ? throughput.perStep / record.seconds
                                           : std::nan(""));
  object["exposed_comm_ms"] = exposedMs;
  object["rank_ms"] = rankMs;
  object["rank_exposed_comm_ms"] = rankExposedMs;
  if (record.evalLoss) {
    object["eval_loss"] = number(*record.evalLoss);
    object["eval_ms"] = record.evalSeconds * 1e3;
  }
  file.write(object.dump());
}

namespace {
Json peaksJson(const std::array<uint64_t, ZSHARD_RT_MEM_NUM_CATEGORIES> &bytes,
               uint64_t total) {
  Json peaks = Json::object();
  for (int c = 0; c < ZSHARD_RT_MEM_NUM_CATEGORIES; ++c)
    peaks[zshard_rt_mem_category_name(static_cast<zshard_rt_mem_category>(c))] =
        bytes[size_t(c)];
  peaks["total"] = total;
  return peaks;
}
} // namespace

std::string zshard::run::summaryJson(const RunSummary &summary) {
  Json peaks = peaksJson(summary.peakBytes, summary.peakTotalBytes);
  Json rankPeaks = Json::array();
  for (const RankPeaks &rank : summary.rankPeaks)
    rankPeaks.push_back(peaksJson(rank.bytes, rank.total));
  Json rankExposed = Json::array(), rankExposedFraction = Json::array();
  for (size_t r = 0; r < summary.rankExposedCommSeconds.size(); ++r) {
    double exposed = summary.rankExposedCommSeconds[r];
    double steps = r < summary.rankStepSecondsOf.size()
                       ? summary.rankStepSecondsOf[r]
                       : 0.0;
    rankExposed.push_back(exposed);
    rankExposedFraction.push_back(steps > 0 ? exposed / steps : 0.0);
  }
  double meanMs =
      summary.steps ? 1e3 * summary.stepSeconds / double(summary.steps) : 0;
  Json object = {
      {"steps", summary.steps},
      {"first_step", summary.firstStep},
      {"last_step", summary.lastStep},
      {"final_loss",
       summary.finalLoss ? number(*summary.finalLoss) : Json(nullptr)},
      {"mean_step_ms", meanMs},
      {"sgemm_fraction", summary.rankStepSeconds > 0
                             ? summary.sgemmSeconds / summary.rankStepSeconds
                             : 0.0},
      {"sgemm_gflops", summary.sgemmSeconds > 0
                           ? summary.sgemmFlops / summary.sgemmSeconds / 1e9
                           : 0.0},
      {"exposed_comm_fraction",
       summary.rankStepSeconds > 0
           ? summary.exposedCommSeconds / summary.rankStepSeconds
           : 0.0},
      {"wall_s", summary.wallSeconds},
      {"peak_bytes", peaks},
      {"ranks", summary.ranks},
      {"backend", summary.backend},
      {"rank_peak_bytes", rankPeaks},
      {"rank_exposed_comm_s", rankExposed},
      {"rank_exposed_comm_fraction", rankExposedFraction}};
  if (summary.finalEvalLoss)
    object["final_eval_loss"] = number(*summary.finalEvalLoss);
  if (summary.lr) {
    object["lr"] = *summary.lr;
    object["lr_source"] = summary.lrSource;
  }
  return object.dump();
}
