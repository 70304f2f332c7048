//===- Trainer.cpp - The training loop of zshard-run ----------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// One rank, one thread: the step runs on the calling thread, whose current
// memory context is the run's, so the step's own allocations (the MLIR hooks)
// and the sgemm counters are this run's.
//
//===----------------------------------------------------------------------===//

#include "Trainer.h"

#include "Report.h"

#include "core/Failure.h"
#include "data/BatchSource.h"
#include "step/Checkpoint.h"
#include "step/Manifest.h"
#include "step/StepBuffers.h"
#include "step/StepLibrary.h"

#include "zshard/runtime/zshard_rt.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

#include <unistd.h>

using namespace zshard;
using namespace zshard::rt;
using namespace zshard::run;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A memory context for the run, current on this thread while it lives.
class RunMemory {
public:
  RunMemory() {
    if (zshard_rt_mem_ctx_create(&ctx) != ZSHARD_RT_OK)
      fail(std::string("cannot create a memory context: ") +
           zshard_rt_last_error_message());
    zshard_rt_set_current_mem_ctx(ctx);
  }
  ~RunMemory() {
    zshard_rt_set_current_mem_ctx(nullptr);
    zshard_rt_mem_ctx_destroy(ctx);
  }
  RunMemory(const RunMemory &) = delete;
  RunMemory &operator=(const RunMemory &) = delete;
  zshard_rt_mem_ctx *get() const { return ctx; }

private:
  zshard_rt_mem_ctx *ctx = nullptr;
};

/// Fails now, not after the run, when \p path cannot be written: its
/// directory must exist and be writable.
void checkWritable(const std::string &path) {
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "."
                    : slash == 0               ? "/"
                                               : path.substr(0, slash);
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    fail(path + ": cannot write: " + std::strerror(errno));
}

/// Every hyper argument must be one zshard-run supplies, as a float scalar.
void checkHypers(const Manifest &manifest) {
  for (const ArgumentDesc &arg : manifest.arguments) {
    if (arg.role != ArgRole::Hyper)
      continue;
    if (arg.name != "lr" && arg.name != "step")
      fail(manifest.path + ": hyper '" + arg.name +
           "' has no value: zshard-run supplies the hypers lr and step");
    if (!isFloatDType(arg.type.dtype))
      fail(manifest.path + ": hyper '" + arg.name + "' is " +
           manifestName(arg.type.dtype) + "; zshard-run supplies a float");
  }
}

Throughput throughputOf(const Manifest &manifest) {
  Throughput throughput;
  if (const ArgumentDesc *tokens =
          manifest.findArgument(ArgRole::Batch, "tokens")) {
    throughput.unit = "tok/s";
    throughput.perStep = double(tokens->type.elements);
  } else if (const ArgumentDesc *x =
                 manifest.findArgument(ArgRole::Batch, "x")) {
    throughput.unit = "samples/s";
    throughput.perStep = x->type.shape.empty() ? 1 : double(x->type.shape[0]);
  }
  return throughput;
}

std::string describeState(const Manifest &manifest) {
  uint64_t params = 0, paramBytes = 0, stateBytes = 0;
  for (const ArgumentDesc &arg : manifest.arguments) {
    if (arg.role == ArgRole::Param) {
      params += arg.type.elements;
      paramBytes += arg.type.bytes;
    } else if (arg.role == ArgRole::OptState) {
      stateBytes += arg.type.bytes;
    }
  }
  return std::to_string(params) + " parameters (" + std::to_string(paramBytes) +
         " bytes, optimizer state " + std::to_string(stateBytes) + " bytes)";
}

} // namespace

void zshard::run::train(const RunOptions &options) {
  Clock::time_point wallStart = Clock::now();
  Manifest manifest = loadManifest(options.artifact);
  if (manifest.ranks != 1)
    fail(manifest.path + ": ranks " + std::to_string(manifest.ranks) +
         ": this zshard-run runs single-rank artifacts (ranks 1) only");
  checkHypers(manifest);
  if (zshard_rt_cpu_set_num_threads(options.threads) != ZSHARD_RT_OK)
    fail(zshard_rt_last_error_message());
  StepLibrary library(manifest);

  if (!options.save.empty())
    checkWritable(options.save);

  RunMemory memory;
  StepBuffers buffers(manifest, memory.get());
  int64_t firstStep = 1;
  if (!options.resume.empty())
    firstStep = loadState(manifest, buffers, options.resume,
                          StateFile::Checkpoint, options.seed) +
                1;
  else if (!options.initFrom.empty())
    loadState(manifest, buffers, options.initFrom, StateFile::Parameters,
              options.seed);
  else
    initFromSpecs(manifest, buffers, options.seed);

  DataOptions dataOptions;
  dataOptions.tokenFile = options.data;
  dataOptions.tokenDType = options.dataDType;
  dataOptions.batchFile = options.batchFile;
  dataOptions.seed = options.seed;
  std::unique_ptr<BatchSource> source = makeBatchSource(manifest, dataOptions);
  std::vector<const ArgumentDesc *> batchArgs = batchArguments(manifest);
  std::unique_ptr<StepLog> log;
  if (!options.logJson.empty())
    log = std::make_unique<StepLog>(options.logJson);

  int64_t lastStep = firstStep + options.steps - 1;
  if (!options.quiet) {
    std::string data =
        source ? source->describe() : "none (no batch arguments)";
    std::fprintf(stderr, "zshard-run: %s: %s; data: %s; steps %lld..%lld\n",
                 manifest.dir.c_str(), describeState(manifest).c_str(),
                 data.c_str(), static_cast<long long>(firstStep),
                 static_cast<long long>(lastStep));
  }

  const ResultDesc &loss = manifest.loss();
  StepFunction step = library.entry();
  Progress progress(options.quiet, throughputOf(manifest), lastStep);
  RunSummary summary;
  summary.firstStep = firstStep;
  summary.lastStep = firstStep - 1;
  zshard_rt_step_sgemm_reset_counters();
  std::vector<void *> batchOutputs(batchArgs.size());
  for (int64_t s = firstStep; s <= lastStep; ++s) {
    for (size_t i = 0; i < batchArgs.size(); ++i)
      batchOutputs[i] = buffers.argument(size_t(batchArgs[i]->index));
    if (source)
      source->fill(s, batchOutputs);
    for (const ArgumentDesc &arg : manifest.arguments)
      if (arg.role == ArgRole::Hyper)
        storeFromDouble(arg.type.dtype, buffers.argument(size_t(arg.index)), 0,
                        arg.name == "lr" ? options.lr : double(s));

    Clock::time_point start = Clock::now();
    step(buffers.pointers());
    double seconds = secondsSince(start);

    StepRecord record{
        s, loadAsDouble(loss.type.dtype, buffers.result(size_t(loss.index)), 0),
        seconds};
    buffers.swapUpdated();
    summary.steps += 1;
    summary.lastStep = s;
    summary.finalLoss = record.loss;
    summary.stepSeconds += seconds;
    progress.step(record);
    if (log)
      log->write(record);
  }
  summary.sgemmSeconds = zshard_rt_step_sgemm_seconds();
  summary.sgemmFlops = zshard_rt_step_sgemm_flops();

  if (!options.save.empty())
    saveState(manifest, buffers, options.save, summary.lastStep);

  for (int c = 0; c < ZSHARD_RT_MEM_NUM_CATEGORIES; ++c)
    zshard_rt_mem_peak_bytes(memory.get(),
                             static_cast<zshard_rt_mem_category>(c),
                             &summary.peakBytes[size_t(c)]);
  zshard_rt_mem_total_peak_bytes(memory.get(), &summary.peakTotalBytes);
  summary.wallSeconds = secondsSince(wallStart);
  progress.finish(summary);
  std::printf("%s\n", summaryJson(summary).c_str());
  std::fflush(stdout);
}
