//===- LrSchedule.cpp - zshard-run's learning-rate schedules --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "LrSchedule.h"
#include "Options.h"

#include "core/Failure.h"
#include "step/Manifest.h"

#include <cmath>
#include <cstdio>

using namespace zshard::run;

const char *zshard::run::lrDecayName(LrDecay decay) {
  return decay == LrDecay::Cosine   ? "cosine"
         : decay == LrDecay::Linear ? "linear"
                                    : "constant";
}

double LrSchedule::at(int64_t step) const {
  // nanoGPT's get_lr(it), term for term (the same order of operations).
  int64_t it = step - 1;
  if (it < warmupSteps)
    return peak * (double(it) + 1.0) / (double(warmupSteps) + 1.0);
  if (decay == LrDecay::Constant)
    return peak;
  if (it > decaySteps)
    return minLr;
  double ratio = double(it - warmupSteps) / double(decaySteps - warmupSteps);
  double coeff = decay == LrDecay::Cosine ? 0.5 * (1.0 + std::cos(M_PI * ratio))
                                          : 1.0 - ratio;
  return minLr + coeff * (peak - minLr);
}

std::string LrSchedule::describe() const {
  if (!varies())
    return "";
  std::string text;
  if (warmupSteps > 0)
    text = "warmup " + std::to_string(warmupSteps) + " steps";
  if (decay == LrDecay::Constant)
    return text + ", then constant";
  char minText[32];
  std::snprintf(minText, sizeof minText, "%.6g", minLr);
  return text + (text.empty() ? "" : ", ") + lrDecayName(decay) + " decay to " +
         minText + " at step " + std::to_string(uint64_t(decaySteps) + 1);
}

namespace {

/// \p lr as printf's %g does it, with enough digits to tell values apart.
std::string formatLr(double lr) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", lr);
  return text;
}

} // namespace

std::string RunLr::describePeak() const {
  return formatLr(schedule.peak) +
         (source == "artifact" ? " (the artifact's)"
          : source == "--lr"   ? " (--lr)"
                               : " (zshard-run's default)");
}

RunLr zshard::run::runLr(const rt::Manifest &manifest,
                         const RunOptions &options) {
  const rt::ArgumentDesc *lrArg =
      manifest.findArgument(rt::ArgRole::Hyper, "lr");
  RunLr lr;
  lr.schedule.warmupSteps = options.warmupSteps;
  lr.schedule.decay = options.lrDecay;
  lr.schedule.decaySteps = options.decaySteps;
  lr.schedule.minLr = options.minLr;
  if (!lrArg && lr.schedule.varies())
    rt::fail(manifest.path + ": the step has no hyper 'lr' for " +
             (options.warmupSteps > 0 ? "--warmup-steps" : "--lr-decay") +
             " to schedule");
  if (options.lrGiven) {
    lr.schedule.peak = options.lr;
    lr.source = "--lr";
  } else if (lrArg && lrArg->defaultValue) {
    if (!(*lrArg->defaultValue > 0))
      rt::fail(manifest.path + ": hyper 'lr' records the default " +
               std::to_string(*lrArg->defaultValue) +
               ", and an lr must be > 0 (give --lr)");
    lr.schedule.peak = *lrArg->defaultValue;
    lr.source = "artifact";
  } else {
    lr.schedule.peak = defaultLr;
    lr.source = "default";
  }
  if (options.minLrGiven && options.minLr > lr.schedule.peak)
    rt::fail("--min-lr " + formatLr(options.minLr) + " is above the lr " +
             lr.describePeak());
  return lr;
}
