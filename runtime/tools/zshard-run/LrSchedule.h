//===- LrSchedule.h - zshard-run's learning-rate schedules ------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The lr each step gets: nanoGPT's get_lr (train.py) on the step's global
/// number. zshard-run's steps count from 1 and nanoGPT's iterations from 0,
/// so step s is nanoGPT's iteration it = s - 1:
///
///   it < W:           lr * (it + 1) / (W + 1)        (linear warmup)
///   constant:         lr                              (after the warmup)
///   it > S:           min_lr
///   otherwise:        min_lr + c * (lr - min_lr), r = (it - W) / (S - W),
///                     c = 0.5 (1 + cos(pi r)) (cosine) or 1 - r (linear)
///
/// The lr of a step depends on nothing but its global number, which every
/// checkpoint records, so a resumed run continues the schedule exactly.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_LRSCHEDULE_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_LRSCHEDULE_H

#include <cstdint>
#include <string>

namespace zshard::rt {
struct Manifest;
} // namespace zshard::rt

namespace zshard::run {

struct RunOptions;

/// How the lr falls after the warmup (--lr-decay).
enum class LrDecay { Constant, Cosine, Linear };

/// "constant", "cosine" or "linear".
const char *lrDecayName(LrDecay decay);

/// The schedule of a run: the peak lr (--lr, else the artifact's, else
/// zshard-run's default) and the schedule options.
struct LrSchedule {
  double peak = 0;
  int64_t warmupSteps = 0;
  LrDecay decay = LrDecay::Constant;
  /// The iteration (nanoGPT's lr_decay_iters) where the decay reaches
  /// minLr; unused for LrDecay::Constant.
  int64_t decaySteps = 0;
  double minLr = 0;

  /// The lr of global step \p step (1-based).
  double at(int64_t step) const;
  /// Whether the lr changes from step to step.
  bool varies() const { return warmupSteps > 0 || decay != LrDecay::Constant; }
  /// For the run's header: "warmup 10 steps, cosine decay to 1e-05 at step
  /// 101"; empty when the lr is constant.
  std::string describe() const;
};

/// The lr a run gives its step: the schedule, whose peak is --lr, else the
/// artifact's recorded value (hyper 'lr', "default"), else defaultLr, and
/// which of them it is.
struct RunLr {
  LrSchedule schedule;
  /// "--lr", "artifact" or "default".
  std::string source;

  /// For the header and messages: "0.01 (--lr)", "0.001 (the artifact's)".
  std::string describePeak() const;
};

/// The lr of a run of \p manifest's step under \p options. Fails (one line)
/// when a schedule is asked of a step without hyper 'lr', when the recorded
/// lr the run would use is not positive, or when --min-lr exceeds the peak.
RunLr runLr(const rt::Manifest &manifest, const RunOptions &options);

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_LRSCHEDULE_H
