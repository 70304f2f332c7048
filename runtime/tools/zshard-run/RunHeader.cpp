//===- RunHeader.cpp - What a zshard-run run says it runs -----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "RunHeader.h"

#include "RunChecks.h"

#include "data/BatchSource.h"
#include "step/Checkpoint.h"
#include "step/Manifest.h"

#include <optional>

using namespace zshard;
using namespace zshard::rt;
using namespace zshard::run;

namespace {

std::string describeState(const Manifest &manifest) {
  uint64_t params = 0, paramBytes = 0, stateBytes = 0;
  for (const StateTensor &t : stateTensors(manifest)) {
    uint64_t bytes = t.elements * dtypeSize(t.dtype);
    if (t.isParam) {
      params += t.elements;
      paramBytes += bytes;
    } else {
      stateBytes += bytes;
    }
  }
  return std::to_string(params) + " parameters (" + std::to_string(paramBytes) +
         " bytes, optimizer state " + std::to_string(stateBytes) + " bytes)";
}

} // namespace

const char *zshard::run::backendName(Backend backend) {
  return backend == Backend::Mpi    ? "mpi"
         : backend == Backend::Nccl ? "nccl"
                                    : "local";
}

Throughput zshard::run::throughputOf(const Manifest &manifest,
                                     const RunOptions &options, int64_t ranks) {
  Throughput throughput;
  std::optional<GptBatch> gpt = matchGptBatch(manifest);
  const ArgumentDesc *tokens =
      gpt ? gpt->tokens
          : manifest.findArgument(ArgRole::Batch, options.dataInputs.empty()
                                                      ? "tokens"
                                                      : options.dataInputs);
  if (tokens) {
    throughput.unit = "tok/s";
    throughput.perStep = double(tokens->type.elements);
  } else if (const ArgumentDesc *x =
                 manifest.findArgument(ArgRole::Batch, "x")) {
    throughput.unit = "samples/s";
    throughput.perStep = x->type.shape.empty() ? 1 : double(x->type.shape[0]);
  }
  if (throughput.unit != "steps/s")
    throughput.perStep *= double(ranks); // the global batch
  return throughput;
}

std::string zshard::run::runHeader(const Manifest &manifest,
                                   const RunOptions &options, const RunLr &lr,
                                   const BatchSource *source, int64_t ranks,
                                   int64_t firstStep, int64_t lastStep) {
  std::string data = source ? source->describe() : "none (no batch arguments)";
  std::string grid;
  if (manifest.sharded()) {
    size_t sharded = 0;
    for (const UnitDesc &unit : manifest.units)
      sharded += unit.sharded();
    grid = "; " + std::to_string(ranks) + " ranks (" + gridText(manifest) +
           ", " + backendName(options.backend) + " backend), " +
           std::to_string(sharded) + " of " +
           std::to_string(manifest.units.size()) + " units sharded";
  }
  std::string lrText;
  if (manifest.findArgument(ArgRole::Hyper, "lr")) {
    lrText = "; lr " + lr.describePeak();
    if (lr.schedule.varies())
      lrText += ", " + lr.schedule.describe();
  }
  // --eval-data (Eval.h).
  if (!options.evalData.empty())
    data += "; eval: " + options.evalData + ", " +
            std::to_string(options.evalSteps) +
            (options.evalSteps == 1 ? " batch" : " batches") +
            (options.evalEvery
                 ? " every " + std::to_string(options.evalEvery) + " steps and"
                 : "") +
            " after the last step";
  return "zshard-run: " + manifest.dir + ": " + describeState(manifest) + grid +
         "; data: " + data + lrText + "; steps " + std::to_string(firstStep) +
         ".." + std::to_string(lastStep);
}
