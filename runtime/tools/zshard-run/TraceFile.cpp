//===- TraceFile.cpp - zshard-run --trace ---------------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "TraceFile.h"

#include "Team.h"

#include "core/Failure.h"
#include "io/FileBytes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

using namespace zshard;
using namespace zshard::run;
using Json = nlohmann::ordered_json;

RankTrace::RankTrace(double origin) : origin(origin) {
  if (zshard_rt_trace_create(&trace) != ZSHARD_RT_OK)
    rt::fail(std::string("--trace: ") + zshard_rt_last_error_message());
}

RankTrace::~RankTrace() { zshard_rt_trace_destroy(trace); }

void RankTrace::endStep(int64_t step, double begin, double end,
                        double exposed) {
  TraceSpan span;
  span.type = TraceSpan::Step;
  span.step = step;
  span.begin = begin - origin;
  span.end = end - origin;
  span.exposed = exposed;
  all.push_back(span);
  uint64_t count = 0;
  zshard_rt_trace_event_count(trace, &count);
  for (uint64_t i = 0; i < count; ++i) {
    zshard_rt_trace_event event;
    if (zshard_rt_trace_get_event(trace, i, &event) != ZSHARD_RT_OK)
      break;
    TraceSpan collective;
    collective.type = event.lane == ZSHARD_RT_TRACE_COMPUTE
                          ? TraceSpan::Blocked
                          : TraceSpan::Collective;
    collective.kind = event.kind;
    collective.unit = event.unit;
    collective.started = event.started;
    collective.step = step;
    collective.bytes = event.bytes;
    collective.begin = event.begin - origin;
    collective.end = event.end - origin;
    all.push_back(collective);
  }
  zshard_rt_trace_clear(trace);
}

std::vector<std::vector<TraceSpan>>
zshard::run::gatherSpans(Team &team, const std::vector<TraceSpan> &mine) {
  // Counts first, then every rank's spans padded to the longest.
  std::vector<uint64_t> counts = team.allGatherValue(uint64_t(mine.size()));
  uint64_t longest = *std::max_element(counts.begin(), counts.end());
  std::vector<TraceSpan> padded(mine);
  padded.resize(size_t(longest));
  std::vector<unsigned char> bytes =
      team.allGather(padded.data(), padded.size() * sizeof(TraceSpan));
  std::vector<std::vector<TraceSpan>> out(counts.size());
  for (size_t r = 0; r < counts.size(); ++r) {
    out[r].resize(size_t(counts[r]));
    if (counts[r])
      std::memcpy(out[r].data(),
                  bytes.data() + r * size_t(longest) * sizeof(TraceSpan),
                  size_t(counts[r]) * sizeof(TraceSpan));
  }
  return out;
}

namespace {

std::string kindName(int32_t kind) {
  const char *name = zshard_rt_collective_kind_name(kind);
  return name ? name : "collective#" + std::to_string(kind);
}

/// The unit's name, or null (-1).
Json unitJson(const TraceInfo &info, int32_t unit) {
  if (unit < 0)
    return nullptr;
  if (size_t(unit) < info.unitNames.size())
    return info.unitNames[size_t(unit)];
  return "unit#" + std::to_string(unit);
}

Json metadata(const char *name, int pid, int tid, Json args) {
  Json event = {{"name", name}, {"ph", "M"}, {"pid", pid}};
  if (tid >= 0)
    event["tid"] = tid;
  event["args"] = std::move(args);
  return event;
}

Json span(std::string name, const char *category, int pid, int tid,
          const TraceSpan &s, Json args) {
  return {{"name", std::move(name)},
          {"cat", category},
          {"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"ts", s.begin * 1e6},
          {"dur", std::max(0.0, s.end - s.begin) * 1e6},
          {"args", std::move(args)}};
}

} // namespace

std::string
zshard::run::traceJson(const std::vector<std::vector<TraceSpan>> &ranks,
                       const TraceInfo &info) {
  Json events = Json::array();
  for (size_t r = 0; r < ranks.size(); ++r) {
    int pid = int(r);
    events.push_back(metadata("process_name", pid, -1,
                              {{"name", "rank " + std::to_string(r)}}));
    events.push_back(
        metadata("process_sort_index", pid, -1, {{"sort_index", pid}}));
    // Collectives of different groups may overlap: each goes to the first
    // communication lane free at its begin (tid 1, 2, ...).
    std::vector<const TraceSpan *> collectives;
    for (const TraceSpan &s : ranks[r])
      if (s.type == TraceSpan::Collective)
        collectives.push_back(&s);
    std::stable_sort(collectives.begin(), collectives.end(),
                     [](const TraceSpan *a, const TraceSpan *b) {
                       return a->begin < b->begin;
                     });
    std::vector<double> laneEnds;
    std::vector<Json> lanes;
    for (const TraceSpan *s : collectives) {
      size_t lane = 0;
      while (lane < laneEnds.size() && laneEnds[lane] > s->begin)
        ++lane;
      if (lane == laneEnds.size())
        laneEnds.push_back(0);
      laneEnds[lane] = s->end;
      Json unit = unitJson(info, s->unit);
      std::string name = kindName(s->kind);
      if (!unit.is_null())
        name += " " + unit.get<std::string>();
      lanes.push_back(span(name, "collective", pid, int(lane) + 1, *s,
                           {{"bytes", s->bytes},
                            {"unit", unit},
                            {"started", s->started != 0},
                            {"step", s->step}}));
    }
    events.push_back(metadata("thread_name", pid, 0, {{"name", "compute"}}));
    events.push_back(
        metadata("thread_sort_index", pid, 0, {{"sort_index", 0}}));
    for (size_t lane = 0; lane < std::max<size_t>(laneEnds.size(), 1); ++lane) {
      std::string name = lane == 0
                             ? "communication"
                             : "communication " + std::to_string(lane + 1);
      events.push_back(
          metadata("thread_name", pid, int(lane) + 1, {{"name", name}}));
      events.push_back(metadata("thread_sort_index", pid, int(lane) + 1,
                                {{"sort_index", int(lane) + 1}}));
    }
    for (const TraceSpan &s : ranks[r]) {
      if (s.type == TraceSpan::Step) {
        events.push_back(
            span("step " + std::to_string(s.step), "step", pid, 0, s,
                 {{"step", s.step}, {"exposed_comm_ms", s.exposed * 1e3}}));
      } else if (s.type == TraceSpan::Blocked) {
        Json unit = unitJson(info, s.unit);
        std::string name = "wait ";
        if (!unit.is_null())
          name += unit.get<std::string>() + " ";
        name += kindName(s.kind);
        events.push_back(span(name, "wait", pid, 0, s,
                              {{"bytes", s.bytes},
                               {"unit", unit},
                               {"kind", kindName(s.kind)},
                               {"started", s.started != 0},
                               {"step", s.step}}));
      }
    }
    for (Json &event : lanes)
      events.push_back(std::move(event));
  }
  Json units = Json::array();
  for (const std::string &name : info.unitNames)
    units.push_back(name);
  Json file = {{"traceEvents", std::move(events)},
               {"displayTimeUnit", "ms"},
               {"otherData",
                {{"producer", "zshard-run"},
                 {"artifact", info.artifact},
                 {"ranks", ranks.size()},
                 {"backend", info.backend},
                 {"link_gbps", info.linkGbps},
                 {"link_latency_us", info.linkLatencyUs},
                 {"units", std::move(units)}}}};
  return file.dump() + "\n";
}

void zshard::run::writeTextFile(const std::string &path,
                                const std::string &text) {
  rt::AtomicFileWriter writer(path);
  writer.write(text.data(), text.size());
  writer.commit();
}
