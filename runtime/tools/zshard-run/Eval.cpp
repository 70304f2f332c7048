//===- Eval.cpp - Evaluation during a zshard-run run ----------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "Eval.h"

#include "Team.h"

#include "core/DType.h"
#include "core/Failure.h"

#include "zshard/runtime/zshard_rt.h"

#include <optional>
#include <vector>

using namespace zshard;
using namespace zshard::rt;
using namespace zshard::run;

namespace {

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The eval library of \p manifest; fails when it has none.
LibraryEntry evalLibrary(const RunOptions &options, const Manifest &manifest) {
  if (!manifest.eval)
    fail(options.artifact + ": --eval-data needs the artifact's eval entry, "
                            "and it has none (compile the step with "
                            "zshard-compile --eval)");
  return libraryEntry(manifest, /*eval=*/true);
}

/// The eval file as --data (a token file) or, named *.safetensors, as
/// --batch-file reads it; token windows in file order.
std::unique_ptr<BatchSource> openEvalData(const RunOptions &options,
                                          const Manifest &manifest,
                                          const RankPlace &place) {
  DataOptions data = trainingData(options, place);
  bool batchFile = endsWith(options.evalData, ".safetensors");
  data.batchFile = batchFile ? options.evalData : "";
  data.tokenFile = batchFile ? "" : options.evalData;
  data.inOrder = true;
  std::unique_ptr<BatchSource> source;
  try {
    source = makeBatchSource(manifest, data);
  } catch (const Failure &failure) {
    fail(std::string("--eval-data: ") + failure.what());
  }
  if (!source)
    fail("--eval-data " + options.evalData +
         ": the step has no batch arguments to feed");
  return source;
}

/// What each rank sends the others after an eval.
struct EvalFigures {
  double loss = 0;
  int64_t failed = 0;
};

} // namespace

Evaluator::Evaluator(const RunOptions &options, const Manifest &manifest,
                     const RankPlace &place)
    : options(options), manifest(manifest),
      library(manifest, evalLibrary(options, manifest)),
      source(openEvalData(options, manifest, place)) {}

bool Evaluator::due(int64_t step, int64_t lastStep) const {
  return step == lastStep ||
         (options.evalEvery != 0 && step % options.evalEvery == 0);
}

double Evaluator::run(Team &team, StepBuffers &buffers, StepBuffers &host,
                      zshard_rt_device *device) {
  const ResultDesc &loss = manifest.loss();
  std::vector<const ArgumentDesc *> batchArgs = batchArguments(manifest);
  std::vector<void *> batchOutputs(batchArgs.size());
  for (size_t i = 0; i < batchArgs.size(); ++i)
    batchOutputs[i] = host.argument(size_t(batchArgs[i]->index));
  // The step's arguments, then the train step's loss buffer (read already).
  std::vector<void *> pointers;
  for (const ArgumentDesc &arg : manifest.arguments)
    pointers.push_back(buffers.argument(size_t(arg.index)));
  pointers.push_back(buffers.result(size_t(loss.index)));

  std::optional<std::string> error;
  auto check = [&](zshard_rt_status status) {
    if (status != ZSHARD_RT_OK && !error)
      error = std::string("--device cuda: ") + zshard_rt_last_error_message();
  };
  double sum = 0;
  double sgemmBefore = zshard_rt_step_sgemm_seconds();
  double flopsBefore = zshard_rt_step_sgemm_flops();
  for (int64_t k = 0; k < options.evalSteps; ++k) {
    // Batch k of the eval data is what a source gives step k + 1.
    source->fill(k + 1, batchOutputs);
    if (device)
      for (const ArgumentDesc *arg : batchArgs)
        check(zshard_rt_device_copy_to_device(
            device, buffers.argument(size_t(arg->index)),
            host.argument(size_t(arg->index)), arg->type.bytes));
    library.entry()(pointers.data());
    if (device) {
      check(zshard_rt_device_synchronize(device));
      check(zshard_rt_device_copy_to_host(
          device, host.result(size_t(loss.index)),
          buffers.result(size_t(loss.index)), loss.type.bytes));
    }
    sum += loadAsDouble(loss.type.dtype, host.result(size_t(loss.index)), 0);
    int64_t pending = zshard_rt_step_pending_collectives();
    if (pending != 0 && !error)
      error = "the eval entry of " + manifest.path + " returned " +
              std::to_string(pending) +
              " started collectives it did not wait for";
  }
  sgemmSecondsSpent += zshard_rt_step_sgemm_seconds() - sgemmBefore;
  sgemmFlopsSpent += zshard_rt_step_sgemm_flops() - flopsBefore;

  EvalFigures mine;
  mine.loss = sum / double(options.evalSteps);
  mine.failed = error.has_value();
  std::vector<EvalFigures> all = team.allGatherValue(mine);
  double mean = 0;
  bool failed = false;
  for (const EvalFigures &figures : all) {
    mean += figures.loss;
    failed |= figures.failed != 0;
  }
  if (failed)
    team.check([&] {
      if (error)
        fail(*error);
    });
  return mean / double(all.size());
}
