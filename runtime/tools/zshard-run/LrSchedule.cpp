//===- LrSchedule.cpp - zshard-run's learning-rate schedules --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "LrSchedule.h"

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
