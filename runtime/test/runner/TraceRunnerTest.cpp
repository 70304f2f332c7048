//===- TraceRunnerTest.cpp - zshard-run --trace, timelines, exposure ------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard-run's views of a run on the hand-written sharded step shard2.zsa
// (which names its collectives by unit: "h.0" is unit 0, "ln" unit 1) and on
// quad.zsa: the Chrome trace (valid JSON, both lanes of every rank, named
// collectives inside their steps), the exposed communication per step and
// per rank under an emulated link, and the memory timeline of one step.
// Bad option values are in RunnerErrorsTest.cpp; the MPI trace in
// ShardedRunnerTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "RunnerSupport.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

Json readJson(const std::string &path) { return Json::parse(readText(path)); }

/// The "M" event \p name of \p pid (and \p tid when >= 0), or null.
Json metadataOf(const Json &events, const std::string &name, int pid,
                int tid = -1) {
  for (const Json &e : events)
    if (e["ph"] == "M" && e["name"] == name && e["pid"] == pid &&
        (tid < 0 || (e.contains("tid") && e["tid"] == tid)))
      return e;
  return Json();
}

} // namespace

// Tests that --trace writes one Trace Event Format file with a compute and a
// communication lane per rank, each step a span on the compute lane holding
// its waits ("wait <unit> <kind>"), each collective a span on the
// communication lane ("<kind> <unit>", args bytes and unit).
TEST(TraceRunnerTest, BothLanesOfEveryRankWithNamedCollectives) {
  TempDir dir;
  RunResult r =
      runTool({artifact("shard2"), "--steps", "3", "--quiet",
               "--link-latency-us", "2000", "--trace", dir.file("trace.json")},
              dir);
  ASSERT_RAN(r);
  Json trace = readJson(dir.file("trace.json"));
  ASSERT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  EXPECT_EQ(trace["otherData"]["units"], Json::array({"h.0", "ln"}));
  EXPECT_EQ(trace["otherData"]["ranks"], 2);
  EXPECT_EQ(trace["otherData"]["link_latency_us"], 2000.0);
  const Json &events = trace["traceEvents"];

  for (int pid = 0; pid < 2; ++pid) {
    SCOPED_TRACE("rank " + std::to_string(pid));
    EXPECT_EQ(metadataOf(events, "process_name", pid)["args"]["name"],
              "rank " + std::to_string(pid));
    EXPECT_EQ(metadataOf(events, "thread_name", pid, 0)["args"]["name"],
              "compute");
    EXPECT_EQ(metadataOf(events, "thread_name", pid, 1)["args"]["name"],
              "communication");

    std::map<int64_t, std::pair<double, double>> steps; // step: [ts, end]
    std::multiset<std::string> waits, collectives;
    std::vector<Json> spans;
    for (const Json &e : events) {
      if (e["ph"] != "X" || e["pid"] != pid)
        continue;
      ASSERT_GE(e["ts"].get<double>(), 0.0);
      ASSERT_GE(e["dur"].get<double>(), 0.0);
      double ts = e["ts"].get<double>(), end = ts + e["dur"].get<double>();
      std::string name = e["name"];
      if (e["cat"] == "step") {
        EXPECT_EQ(e["tid"], 0);
        EXPECT_EQ(name, "step " + std::to_string(e["args"]["step"].get<int>()));
        steps[e["args"]["step"].get<int64_t>()] = {ts, end};
        continue;
      }
      spans.push_back(e);
      if (e["cat"] == "wait") {
        EXPECT_EQ(e["tid"], 0);
        waits.insert(name);
      } else {
        EXPECT_EQ(e["cat"], "collective");
        EXPECT_EQ(e["tid"], 1) << "one group: one communication lane";
        collectives.insert(name);
        // The emulated latency, at least.
        EXPECT_GE(e["dur"].get<double>(), 2000.0 * 0.95) << name;
        if (name == "all_gather h.0") {
          EXPECT_EQ(e["args"]["bytes"], 14 * 4); // padded 2 x 7 floats
          EXPECT_EQ(e["args"]["unit"], "h.0");
          EXPECT_EQ(e["args"]["started"], true);
        } else if (name == "all_reduce ln") {
          EXPECT_EQ(e["args"]["bytes"], 3 * 4);
          EXPECT_EQ(e["args"]["unit"], "ln");
        }
      }
    }
    ASSERT_EQ(steps.size(), 3u);
    const std::multiset<std::string> expectWaits = {
        "wait h.0 all_gather",     "wait h.0 all_gather",
        "wait h.0 all_gather",     "wait h.0 reduce_scatter",
        "wait h.0 reduce_scatter", "wait h.0 reduce_scatter",
        "wait ln all_reduce",      "wait ln all_reduce",
        "wait ln all_reduce"};
    const std::multiset<std::string> expectCollectives = {
        "all_gather h.0",     "all_gather h.0",     "all_gather h.0",
        "reduce_scatter h.0", "reduce_scatter h.0", "reduce_scatter h.0",
        "all_reduce ln",      "all_reduce ln",      "all_reduce ln"};
    EXPECT_EQ(waits, expectWaits);
    EXPECT_EQ(collectives, expectCollectives);
    // Every span lies inside its step.
    for (const Json &e : spans) {
      auto [begin, end] = steps.at(e["args"]["step"].get<int64_t>());
      double ts = e["ts"].get<double>();
      EXPECT_GE(ts, begin - 1e-3) << e.dump();
      EXPECT_LE(ts + e["dur"].get<double>(), end + 1e-3) << e.dump();
    }
  }
}

// Tests the exposed communication: per step in --log-json (the slowest
// rank's and each rank's) and per rank in the summary. With 20 ms of latency
// on each of the step's three collectives, and almost no compute to hide
// them behind, nearly all of a step is exposed.
TEST(TraceRunnerTest, ExposedCommunicationPerStepAndRank) {
  TempDir dir;
  RunResult r = runTool({artifact("shard2"), "--steps", "2", "--quiet",
                         "--link-latency-us", "20000", "--log-json",
                         dir.file("log.jsonl")},
                        dir);
  ASSERT_RAN(r);
  std::vector<std::string> log = lines(readText(dir.file("log.jsonl")));
  ASSERT_EQ(log.size(), 2u);
  for (const std::string &line : log) {
    Json record = Json::parse(line);
    double ms = record["ms"], exposed = record["exposed_comm_ms"];
    EXPECT_GE(exposed, 3 * 20 * 0.95) << line;
    EXPECT_LE(exposed, ms) << line;
    ASSERT_EQ(record["rank_ms"].size(), 2u);
    ASSERT_EQ(record["rank_exposed_comm_ms"].size(), 2u);
    for (int rank = 0; rank < 2; ++rank) {
      EXPECT_LE(record["rank_exposed_comm_ms"][rank].get<double>(),
                record["rank_ms"][rank].get<double>());
      EXPECT_LE(record["rank_exposed_comm_ms"][rank].get<double>(), exposed);
    }
  }
  Json summary = summaryOf(r);
  EXPECT_GT(summary["exposed_comm_fraction"].get<double>(), 0.9);
  EXPECT_LE(summary["exposed_comm_fraction"].get<double>(), 1.0);
  ASSERT_EQ(summary["rank_exposed_comm_s"].size(), 2u);
  ASSERT_EQ(summary["rank_exposed_comm_fraction"].size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_GE(summary["rank_exposed_comm_s"][rank].get<double>(),
              2 * 3 * 0.020 * 0.95);
    EXPECT_GT(summary["rank_exposed_comm_fraction"][rank].get<double>(), 0.9);
  }

  // A single-rank step has no communication.
  RunResult quad = runTool({artifact("quad"), "--steps", "2", "--quiet",
                            "--log-json", dir.file("quad.jsonl")},
                           dir);
  ASSERT_RAN(quad);
  EXPECT_EQ(summaryOf(quad)["exposed_comm_fraction"], 0.0);
  EXPECT_EQ(summaryOf(quad)["rank_exposed_comm_s"], Json::array({0.0}));
  Json first = Json::parse(lines(readText(dir.file("quad.jsonl")))[0]);
  EXPECT_EQ(first["exposed_comm_ms"], 0.0);
}

// Tests that a single-rank run writes a trace too: its steps, no collectives.
TEST(TraceRunnerTest, SingleRankTrace) {
  TempDir dir;
  RunResult r = runTool({artifact("quad"), "--steps", "2", "--quiet", "--trace",
                         dir.file("trace.json")},
                        dir);
  ASSERT_RAN(r);
  Json trace = readJson(dir.file("trace.json"));
  int steps = 0, others = 0;
  for (const Json &e : trace["traceEvents"])
    if (e["ph"] == "X")
      (e["cat"] == "step" ? steps : others) += 1;
  EXPECT_EQ(steps, 2);
  EXPECT_EQ(others, 0);
  EXPECT_FALSE(metadataOf(trace["traceEvents"], "thread_name", 0, 1).is_null());
}

// Tests --memory-timeline: rank 0's live bytes per category at every change
// of the chosen step, from its start, with the peaks over them.
TEST(TraceRunnerTest, MemoryTimelineOfOneStep) {
  TempDir dir;
  RunResult r = runTool({artifact("shard2"), "--steps", "3", "--quiet",
                         "--memory-timeline", dir.file("memory.json"),
                         "--memory-timeline-step", "2"},
                        dir);
  ASSERT_RAN(r);
  Json timeline = readJson(dir.file("memory.json"));
  EXPECT_EQ(timeline["step"], 2);
  EXPECT_EQ(timeline["rank"], 0);
  EXPECT_EQ(timeline["categories"],
            Json::array({"parameters", "gradients", "optimizer_state",
                         "activations", "communication", "other",
                         "host_offload", "buffers"}));
  const Json &events = timeline["events"];
  // The start, then the step's hook allocations (the gathered buffer and the
  // gradient, 14 floats each, and inside them sumOfSquares's one-float
  // accumulator) and their frees.
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[0]["t"], 0.0);
  const uint64_t start = events[0]["live"]["activations"];
  const uint64_t expect[] = {0, 56, 112, 116, 112, 56, 0};
  double last = 0, seconds = timeline["step_seconds"];
  std::map<std::string, uint64_t> peak;
  uint64_t peakTotal = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const Json &e = events[i];
    EXPECT_EQ(e["live"]["activations"].get<uint64_t>() - start, expect[i]);
    EXPECT_GE(e["t"].get<double>(), last);
    EXPECT_LE(e["t"].get<double>(), seconds + 1e-6);
    last = e["t"];
    uint64_t total = 0;
    for (auto &[name, bytes] : e["live"].items()) {
      if (name != "host_offload")
        total += bytes.get<uint64_t>();
      peak[name] = std::max(peak[name], bytes.get<uint64_t>());
    }
    EXPECT_EQ(e["total"], total);
    peakTotal = std::max(peakTotal, total);
  }
  for (auto &[name, bytes] : peak)
    EXPECT_EQ(timeline["peak"][name], bytes) << name;
  EXPECT_EQ(timeline["peak"]["total"], peakTotal);
  EXPECT_LE(peakTotal, summaryOf(r)["rank_peak_bytes"][0]["total"]);

  // By default the last step.
  ASSERT_RAN(runTool({artifact("shard2"), "--steps", "2", "--quiet",
                      "--memory-timeline", dir.file("last.json")},
                     dir));
  EXPECT_EQ(readJson(dir.file("last.json"))["step"], 2);
}

// Tests that a timeline step outside the run stops every rank before the
// first step, with one message.
TEST(TraceRunnerTest, TimelineStepOutsideTheRun) {
  TempDir dir;
  RunResult r =
      runTool({artifact("shard2"), "--steps", "3", "--memory-timeline",
               dir.file("memory.json"), "--memory-timeline-step", "9"},
              dir);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(lines(r.err).back(),
            "zshard-run: error: --memory-timeline-step 9 is not a step of "
            "this run (1..3)");
}
