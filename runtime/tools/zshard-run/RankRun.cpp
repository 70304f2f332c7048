//===- RankRun.cpp - One rank of a zshard-run run -------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Around each step call a rank measures the time its thread was blocked in
// collectives (zshard_rt_step_comm_wait_seconds: the exposed communication)
// and, with --trace, has its RankTrace current; with --memory-timeline rank 0
// records its memory context's timeline through the chosen step.
//
// Buffers live on the rank's device (RankDevice.h). On --device cpu that is
// host memory, as it always was. On --device cuda the step's buffers are GPU
// memory and a host mirror of them (charged to a context of its own, so the
// rank's figures are the GPU's) stages what the host reads and writes: the
// state is initialised or loaded there and copied up once, each step's batch
// and hypers are copied up, its loss copied back, and checkpoints copy the
// state down first. The step time then includes waiting for the GPU.
//
//===----------------------------------------------------------------------===//

#include "RankRun.h"

#include "CheckpointDir.h"
#include "Eval.h"
#include "LrSchedule.h"
#include "MemoryTimeline.h"
#include "RankDevice.h"
#include "RankSave.h"
#include "Report.h"
#include "RunChecks.h"
#include "RunHeader.h"
#include "Team.h"
#include "TraceFile.h"

#include "core/Failure.h"
#include "data/BatchSource.h"
#include "step/Checkpoint.h"
#include "step/Manifest.h"
#include "step/StepBuffers.h"
#include "step/StepLibrary.h"

#include "zshard/runtime/zshard_rt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>

using namespace zshard;
using namespace zshard::rt;
using namespace zshard::run;

namespace {

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A memory context for a rank, current on its thread while it lives.
class RankMemory {
public:
  /// \p current: make it the thread's current context (the rank's own; a
  /// host mirror's is not).
  explicit RankMemory(bool current = true) : current(current) {
    if (zshard_rt_mem_ctx_create(&ctx) != ZSHARD_RT_OK)
      fail(std::string("cannot create a memory context: ") +
           zshard_rt_last_error_message());
    if (current)
      zshard_rt_set_current_mem_ctx(ctx);
  }
  ~RankMemory() {
    if (current)
      zshard_rt_set_current_mem_ctx(nullptr);
    zshard_rt_mem_ctx_destroy(ctx);
  }
  RankMemory(const RankMemory &) = delete;
  RankMemory &operator=(const RankMemory &) = delete;
  zshard_rt_mem_ctx *get() const { return ctx; }

private:
  bool current;
  zshard_rt_mem_ctx *ctx = nullptr;
};

/// What each rank sends rank 0 after a step.
struct StepFigures {
  double loss = 0;
  double seconds = 0;
  double exposedSeconds = 0;
  int64_t failed = 0;
};

/// What each rank sends rank 0 at the end.
struct RankFigures {
  RankPeaks peaks;
  double stepSeconds = 0;
  double sgemmSeconds = 0;
  double sgemmFlops = 0;
  double exposedSeconds = 0;
};

/// One rank of a run.
class RankRun {
public:
  RankRun(const RunOptions &options, Team &team, Clock::time_point wallStart,
          const RankDevice &device)
      : options(options), team(team), wallStart(wallStart),
        lead(team.rank() == 0), device(device.get()), onGpu(device.onGpu()) {}

  void run();

private:
  /// Where the host reads and writes the step's buffers: the buffers
  /// themselves, or their host mirror on a GPU.
  StepBuffers &hostSide() { return onGpu ? *mirror : *buffers; }
  /// On a GPU: argument \p arg from the mirror to the device, and back.
  void upload(const ArgumentDesc &arg);
  void download(const ArgumentDesc &arg);
  /// On a GPU: every state argument (param, opt_state, shards) to the mirror.
  void downloadState();
  void load();
  /// --resume auto: the newest checkpoint, as rank 0 found it (collective).
  void findCheckpoint();
  void initState();
  /// The last step this run takes.
  int64_t lastStepOfRun() const;
  void loop();
  void writeTraces();
  void save();
  /// The state as RankSave.h saves it.
  RankState savedState() {
    return {team, *manifest, place, hostSide(), *buffers};
  }
  /// --checkpoint-dir: the checkpoint of step \p step (collective).
  void saveCheckpoint(int64_t step);
  void report();

  const RunOptions &options;
  Team &team;
  Clock::time_point wallStart;
  bool lead;
  zshard_rt_device *device;
  bool onGpu;

  RankMemory memory;
  /// On a GPU: the host mirror's own memory context.
  std::unique_ptr<RankMemory> mirrorMemory;
  std::unique_ptr<StepBuffers> mirror;
  std::unique_ptr<Manifest> manifest;
  std::unique_ptr<StepLibrary> library;
  /// --eval-data.
  std::unique_ptr<Evaluator> evaluator;
  RankPlace place;
  std::unique_ptr<StepBuffers> buffers;
  std::unique_ptr<BatchSource> source;
  std::unique_ptr<StepLog> log;
  std::unique_ptr<TextLog> textLog;
  std::unique_ptr<Progress> progress;
  int64_t firstStep = 1;
  /// The lr of each step and where its peak comes from.
  RunLr lr;
  /// --checkpoint-dir, and with --resume auto the checkpoint found there.
  std::unique_ptr<CheckpointDir> checkpoints;
  std::optional<SavedCheckpoint> resumeFrom;
  RunSummary summary;
  double ownStepSeconds = 0;
  double ownExposedSeconds = 0;
  /// --trace: this rank's spans.
  std::unique_ptr<RankTrace> trace;
  /// --memory-timeline: the step recorded (0: none yet) and its times.
  int64_t timelineStep = 0;
  double timelineBegin = 0, timelineEnd = 0;
};

void RankRun::upload(const ArgumentDesc &arg) {
  size_t i = size_t(arg.index);
  if (zshard_rt_device_copy_to_device(device, buffers->argument(i),
                                      mirror->argument(i),
                                      arg.type.bytes) != ZSHARD_RT_OK)
    fail(std::string("--device cuda: ") + zshard_rt_last_error_message());
}

void RankRun::download(const ArgumentDesc &arg) {
  size_t i = size_t(arg.index);
  if (zshard_rt_device_copy_to_host(device, mirror->argument(i),
                                    buffers->argument(i),
                                    arg.type.bytes) != ZSHARD_RT_OK)
    fail(std::string("--device cuda: ") + zshard_rt_last_error_message());
}

void RankRun::downloadState() {
  if (!onGpu)
    return;
  for (const ArgumentDesc &arg : manifest->arguments)
    if (arg.role != ArgRole::Batch && arg.role != ArgRole::Hyper)
      download(arg);
}

void RankRun::run() {
  // The step's temporaries and products go to the rank's GPU, if it has one.
  CurrentDevice current(onGpu ? device : nullptr);
  team.check([&] { load(); });
  if (manifest->sharded()) {
    team.check([&] {
      team.createGrid(manifest->grid->shape);
      // The runtime's grid and the manifest agree on where this rank sits.
      for (size_t axis = 0; axis < place.coords.size(); ++axis)
        if (zshard_rt_step_grid_coord(int32_t(axis)) != place.coords[axis])
          fail("internal error: rank " + std::to_string(place.rank) +
               " is not at the grid coordinates of the manifest's layout");
    });
  }
  findCheckpoint();
  team.check([&] { initState(); });
  // Every rank resumes at the same step.
  std::vector<int64_t> firsts = team.allGatherValue(firstStep);
  team.check([&] {
    for (size_t r = 1; r < firsts.size(); ++r)
      if (firsts[r] != firsts[0])
        fail(options.resume +
             ": the rank files disagree on the step: rank 0 "
             "saved step " +
             std::to_string(firsts[0] - 1) + ", rank " + std::to_string(r) +
             " step " + std::to_string(firsts[r] - 1));
  });
  if (!options.trace.empty()) {
    // One origin for the spans of every rank: rank 0's clock on the local
    // backend (the ranks share it); each process's own after this collective
    // under MPI (its machine's clock may be another one).
    std::vector<double> origins =
        team.allGatherValue(zshard_rt_clock_seconds());
    double origin = options.backend == Backend::Local
                        ? origins[0]
                        : origins[size_t(team.rank())];
    team.check([&] { trace = std::make_unique<RankTrace>(origin); });
  }
  loop();
  writeTraces();
  save();
  report();
}

void RankRun::load() {
  manifest = std::make_unique<Manifest>(loadManifest(options.artifact));
  checkTarget(*manifest, options);
  checkRanks(*manifest, options, team.size());
  lr = runLr(*manifest, options);
  checkHypers(*manifest);
  library = std::make_unique<StepLibrary>(*manifest);
  place = RankPlace::of(*manifest, team.rank());
  if (!options.evalData.empty())
    evaluator = std::make_unique<Evaluator>(options, *manifest, place);
  if (!options.save.empty())
    checkWritable(manifest->sharded()
                      ? rankFilePath(options.save, place.rank, place.ranks)
                      : options.save);
  if (lead && !options.saveFull.empty())
    checkWritable(options.saveFull);
  if (lead && !options.saveTorch.empty())
    checkWritable(options.saveTorch);
  if (lead && !options.trace.empty())
    checkWritable(options.trace);
  if (lead && !options.memoryTimeline.empty())
    checkWritable(options.memoryTimeline);
  if (!options.checkpointDir.empty()) {
    checkpoints =
        std::make_unique<CheckpointDir>(options.checkpointDir, options.keep);
    if (lead)
      checkpoints->prepare();
  }
}

void RankRun::findCheckpoint() {
  if (options.resumeAuto)
    resumeFrom = findNewestCheckpoint(team, *checkpoints);
}

int64_t RankRun::lastStepOfRun() const {
  // --resume auto: --steps is where the run ends, wherever it resumed.
  if (options.resumeAuto)
    return std::max(options.steps, firstStep - 1);
  return firstStep + options.steps - 1;
}

void RankRun::initState() {
  buffers = std::make_unique<StepBuffers>(*manifest, memory.get(), device);
  if (onGpu) {
    mirrorMemory = std::make_unique<RankMemory>(false);
    mirror = std::make_unique<StepBuffers>(*manifest, mirrorMemory->get());
  }
  StepBuffers &state = hostSide();
  uint64_t seed = options.seed;
  // --resume auto reads the checkpoint found as --resume (rank files) or
  // --resume-full (a consolidated file) would.
  std::string resume = options.resume, resumeFull = options.resumeFull;
  if (resumeFrom)
    (resumeFrom->rankFiles ? resume : resumeFull) = resumeFrom->statePath();
  if (!resume.empty()) {
    if (manifest->sharded()) {
      std::string path = rankFilePath(resume, place.rank, place.ranks);
      if (!fileExists(path))
        fail(
            path +
            ": no such rank file (--resume of a sharded run reads "
            "the files --save wrote, one per rank, for the same "
            "rank count" +
            std::string(fileExists(resume)
                            ? "; " + resume + " itself loads with --resume-full"
                            : "") +
            ")");
      firstStep = loadRankState(*manifest, state, path, place) + 1;
      initDerivedBuffers(*manifest, state, seed, place);
    } else {
      firstStep = loadState(*manifest, state, resume, StateFile::Checkpoint,
                            seed, place) +
                  1;
    }
  } else if (!resumeFull.empty()) {
    firstStep = loadState(*manifest, state, resumeFull, StateFile::Checkpoint,
                          seed, place) +
                1;
  } else if (!options.initFrom.empty()) {
    loadState(*manifest, state, options.initFrom, StateFile::Parameters, seed,
              place);
  } else {
    initFromSpecs(*manifest, state, seed, place);
  }

  // Everything the step reads starts on the device as the host built it.
  if (onGpu)
    for (const ArgumentDesc &arg : manifest->arguments)
      upload(arg);

  source = makeBatchSource(*manifest, trainingData(options, place));
  if (lead && !options.logJson.empty())
    log = std::make_unique<StepLog>(
        options.logJson, throughputOf(*manifest, options, place.ranks));
  if (lead && !options.logText.empty())
    textLog = std::make_unique<TextLog>(options.logText);
}

void RankRun::loop() {
  int64_t lastStep = lastStepOfRun();
  int64_t recordStep =
      options.memoryTimelineStep ? options.memoryTimelineStep : lastStep;
  team.check([&] {
    if (options.memoryTimeline.empty())
      return;
    if (options.steps == 0)
      fail("--memory-timeline: no step runs (--steps 0)");
    if (recordStep < firstStep || recordStep > lastStep)
      fail("--memory-timeline-step " + std::to_string(recordStep) +
           " is not a step of this run (" + std::to_string(firstStep) + ".." +
           std::to_string(lastStep) + ")");
  });
  std::string header;
  if (lead && (!options.quiet || textLog)) {
    header = runHeader(*manifest, options, lr, source.get(), place.ranks,
                       firstStep, lastStep);
    if (!options.quiet)
      std::fprintf(stderr, "%s\n", header.c_str());
  }
  // --log starts with the header.
  team.check([&] {
    if (textLog)
      textLog->write(header);
  });
  if (lead)
    progress = std::make_unique<Progress>(
        options.quiet, throughputOf(*manifest, options, place.ranks), lastStep,
        textLog.get());

  const ResultDesc &loss = manifest->loss();
  StepFunction step = library->entry();
  std::vector<const ArgumentDesc *> batchArgs = batchArguments(*manifest);
  std::vector<void *> batchOutputs(batchArgs.size());
  summary.firstStep = firstStep;
  summary.lastStep = firstStep - 1;
  zshard_rt_step_sgemm_reset_counters();
  // A failure of rank 0's output (the log file) stops every rank after the
  // next step's figures.
  std::optional<std::string> outputError;
  bool hasLr = manifest->findArgument(ArgRole::Hyper, "lr") != nullptr;
  for (int64_t s = firstStep; s <= lastStep; ++s) {
    StepBuffers &io = hostSide();
    double stepLr = lr.schedule.at(s);
    for (size_t i = 0; i < batchArgs.size(); ++i)
      batchOutputs[i] = io.argument(size_t(batchArgs[i]->index));
    if (source)
      source->fill(s, batchOutputs);
    for (const ArgumentDesc &arg : manifest->arguments)
      if (arg.role == ArgRole::Hyper)
        storeFromDouble(arg.type.dtype, io.argument(size_t(arg.index)), 0,
                        arg.name == "lr" ? stepLr : double(s));
    if (onGpu)
      for (const ArgumentDesc &arg : manifest->arguments)
        if (arg.role == ArgRole::Batch || arg.role == ArgRole::Hyper)
          upload(arg);

    bool recordMemory =
        lead && !options.memoryTimeline.empty() && s == recordStep;
    if (recordMemory &&
        zshard_rt_mem_timeline_start(memory.get()) != ZSHARD_RT_OK) {
      recordMemory = false;
      if (!outputError)
        outputError =
            std::string("--memory-timeline: ") + zshard_rt_last_error_message();
    }
    if (trace)
      zshard_rt_set_current_trace(trace->get());
    double waitedBefore = zshard_rt_step_comm_wait_seconds();
    double begin = zshard_rt_clock_seconds();
    step(buffers->pointers());
    // On a GPU the step has queued its work; the step ends when it is done.
    if (onGpu && zshard_rt_device_synchronize(device) != ZSHARD_RT_OK &&
        !outputError)
      outputError =
          std::string("--device cuda: ") + zshard_rt_last_error_message();
    double end = zshard_rt_clock_seconds();
    double seconds = end - begin;
    double exposed = zshard_rt_step_comm_wait_seconds() - waitedBefore;
    if (trace) {
      zshard_rt_set_current_trace(nullptr);
      trace->endStep(s, begin, end, exposed);
    }
    if (recordMemory) {
      zshard_rt_mem_timeline_stop(memory.get());
      timelineStep = s;
      timelineBegin = begin;
      timelineEnd = end;
    }
    ownStepSeconds += seconds;
    ownExposedSeconds += exposed;

    StepFigures mine;
    if (onGpu &&
        zshard_rt_device_copy_to_host(device, io.result(size_t(loss.index)),
                                      buffers->result(size_t(loss.index)),
                                      loss.type.bytes) != ZSHARD_RT_OK &&
        !outputError)
      outputError =
          std::string("--device cuda: ") + zshard_rt_last_error_message();
    mine.loss = loadAsDouble(loss.type.dtype, io.result(size_t(loss.index)), 0);
    mine.seconds = seconds;
    mine.exposedSeconds = exposed;
    int64_t pending = zshard_rt_step_pending_collectives();
    if (pending != 0 && !outputError)
      outputError = "the step of " + manifest->libraryPath() + " returned " +
                    std::to_string(pending) +
                    " started collectives it did not wait for";
    mine.failed = outputError.has_value();
    buffers->swapUpdated();

    // The loss of the run: the mean of the ranks' losses, in rank order;
    // the step's time: the slowest rank's.
    std::vector<StepFigures> all = team.allGatherValue(mine);
    StepRecord record;
    record.step = s;
    if (hasLr)
      record.lr = stepLr;
    bool failed = false;
    for (const StepFigures &figures : all) {
      record.loss += figures.loss;
      record.seconds = std::max(record.seconds, figures.seconds);
      record.rankSeconds.push_back(figures.seconds);
      record.rankExposedSeconds.push_back(figures.exposedSeconds);
      failed |= figures.failed != 0;
    }
    record.loss /= double(all.size());
    if (failed)
      team.check([&] {
        if (outputError)
          fail(*outputError);
      });
    summary.steps += 1;
    summary.lastStep = s;
    summary.finalLoss = record.loss;
    if (evaluator && evaluator->due(s, lastStep)) {
      double evalBegin = zshard_rt_clock_seconds();
      record.evalLoss =
          evaluator->run(team, *buffers, hostSide(), onGpu ? device : nullptr);
      record.evalSeconds = zshard_rt_clock_seconds() - evalBegin;
      summary.finalEvalLoss = record.evalLoss;
    }
    summary.stepSeconds += record.seconds;
    if (lead) {
      try {
        progress->step(record);
        if (log)
          log->write(record);
      } catch (const std::exception &e) {
        outputError = e.what();
        if (team.size() == 1)
          throw;
      }
    }
    // Every rank has the same mean loss, so all of them stop here together.
    if (options.stopOnNan && !std::isfinite(record.loss))
      team.check([&] {
        std::string why = "step " + std::to_string(s) + ": the loss is " +
                          (std::isnan(record.loss) ? "nan"
                           : record.loss > 0       ? "inf"
                                                   : "-inf") +
                          " (--stop-on-nan)";
        // --log ends with the line that says why (if it can be written).
        if (textLog) {
          try {
            textLog->write("zshard-run: error: " + why);
          } catch (const std::exception &) {
          }
        }
        fail(why);
      });
    if (checkpoints &&
        ((options.saveEvery != 0 && s % options.saveEvery == 0) ||
         s == lastStep))
      saveCheckpoint(s);
  }
  team.check([&] {
    if (outputError)
      fail(*outputError);
  });
}

void RankRun::writeTraces() {
  if (trace) {
    std::vector<std::vector<TraceSpan>> all = gatherSpans(team, trace->spans());
    team.check([&] {
      if (!lead)
        return;
      TraceInfo info;
      info.artifact = manifest->dir;
      info.backend = backendName(options.backend);
      for (const UnitDesc &unit : manifest->units)
        info.unitNames.push_back(unit.name);
      info.linkGbps = options.linkGbps;
      info.linkLatencyUs = options.linkLatencyUs;
      writeTextFile(options.trace, traceJson(all, info));
    });
  }
  if (!options.memoryTimeline.empty())
    team.check([&] {
      if (lead && timelineStep != 0)
        writeTextFile(options.memoryTimeline,
                      memoryTimelineJson(memory.get(), timelineStep,
                                         team.rank(), timelineBegin,
                                         timelineEnd));
    });
}

void RankRun::save() {
  if (onGpu && (!options.save.empty() || !options.saveFull.empty() ||
                !options.saveTorch.empty()))
    team.check([&] { downloadState(); });
  if (!options.save.empty())
    saveRankFiles(savedState(), options.save, summary.lastStep);
  if (!options.saveFull.empty())
    saveConsolidated(savedState(), options.saveFull, summary.lastStep);
  if (!options.saveTorch.empty())
    saveTorchStateDict(savedState(), options.saveTorch, summary.lastStep);
}

void RankRun::saveCheckpoint(int64_t step) {
  if (onGpu)
    team.check([&] { downloadState(); });
  std::string published = zshard::run::saveCheckpoint(
      savedState(), *checkpoints, options.saveFormat, step);
  team.check([&] {
    if (lead)
      progress->note("checkpoint: step " + std::to_string(step) + " saved in " +
                     published);
  });
}

void RankRun::report() {
  RankFigures mine;
  zshard_rt_mem_ctx *ctx = memory.get();
  for (int c = 0; c < ZSHARD_RT_MEM_NUM_CATEGORIES; ++c)
    zshard_rt_mem_peak_bytes(ctx, static_cast<zshard_rt_mem_category>(c),
                             &mine.peaks.bytes[size_t(c)]);
  zshard_rt_mem_total_peak_bytes(ctx, &mine.peaks.total);
  mine.stepSeconds = ownStepSeconds;
  // The eval entry's products are not the step's.
  mine.sgemmSeconds = zshard_rt_step_sgemm_seconds() -
                      (evaluator ? evaluator->sgemmSeconds() : 0);
  mine.sgemmFlops =
      zshard_rt_step_sgemm_flops() - (evaluator ? evaluator->sgemmFlops() : 0);
  mine.exposedSeconds = ownExposedSeconds;
  std::vector<RankFigures> all = team.allGatherValue(mine);
  if (!lead)
    return;
  summary.ranks = place.ranks;
  summary.backend = backendName(options.backend);
  if (manifest->findArgument(ArgRole::Hyper, "lr")) {
    summary.lr = lr.schedule.peak;
    summary.lrSource = lr.source;
  }
  for (const RankFigures &figures : all) {
    summary.rankPeaks.push_back(figures.peaks);
    for (size_t c = 0; c < summary.peakBytes.size(); ++c)
      summary.peakBytes[c] =
          std::max(summary.peakBytes[c], figures.peaks.bytes[c]);
    summary.peakTotalBytes =
        std::max(summary.peakTotalBytes, figures.peaks.total);
    summary.rankStepSeconds += figures.stepSeconds;
    summary.sgemmSeconds += figures.sgemmSeconds;
    summary.sgemmFlops += figures.sgemmFlops;
    summary.exposedCommSeconds += figures.exposedSeconds;
    summary.rankStepSecondsOf.push_back(figures.stepSeconds);
    summary.rankExposedCommSeconds.push_back(figures.exposedSeconds);
  }
  summary.wallSeconds = secondsSince(wallStart);
  progress->finish(summary);
  std::printf("%s\n", summaryJson(summary).c_str());
  std::fflush(stdout);
}

} // namespace

void zshard::run::runRank(const RunOptions &options, Team &team,
                          Clock::time_point wallStart,
                          const RankDevice &device) {
  RankRun(options, team, wallStart, device).run();
}
