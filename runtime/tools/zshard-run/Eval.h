//===- Eval.h - Evaluation during a zshard-run run --------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// --eval-data FILE, --eval-every N, --eval-steps K: after every N-th step
/// and after the last, each rank runs the artifact's forward-only eval entry
/// (zshard-compile --eval) on K batches of FILE, the first K in file order
/// (wrapping), with the parameters that step left, and the run's eval loss
/// is the mean over the K batches of the ranks' mean, like the train loss.
/// The eval entry reads the step's argument buffers and writes only its loss
/// (the train step's loss buffer, already read), so training goes on as if
/// no eval had run; only the batch arguments are overwritten, and the next
/// step fills them again.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_EVAL_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_EVAL_H

#include "Options.h"

#include "data/BatchSource.h"
#include "step/Checkpoint.h"
#include "step/Manifest.h"
#include "step/StepBuffers.h"
#include "step/StepLibrary.h"

#include <memory>
#include <string>

namespace zshard::run {

class Team;

/// The eval of one rank.
class Evaluator {
public:
  /// Opens the eval library of \p manifest and \p options.evalData for the
  /// rank at \p place. Throws a Failure when the artifact has no eval entry
  /// or the file does not fit the step.
  Evaluator(const RunOptions &options, const rt::Manifest &manifest,
            const rt::RankPlace &place);

  /// Whether the run evaluates after step \p step of a run that ends at
  /// \p lastStep.
  bool due(int64_t step, int64_t lastStep) const;

  /// This rank's eval on the state in \p buffers (after the step's
  /// swapUpdated()); \p host: where the host writes batches and reads the
  /// loss (\p buffers itself, or its mirror on \p device, non-null for a
  /// GPU). Collective: every rank calls it at the same steps. Returns the
  /// run's eval loss (the mean over the batches of the ranks' mean, in rank
  /// order), the same on every rank.
  double run(Team &team, rt::StepBuffers &buffers, rt::StepBuffers &host,
             zshard_rt_device *device);

  /// The seconds this rank spent in the eval entry's sgemm calls, which
  /// are not the step's.
  double sgemmSeconds() const { return sgemmSecondsSpent; }
  double sgemmFlops() const { return sgemmFlopsSpent; }

private:
  const RunOptions &options;
  const rt::Manifest &manifest;
  rt::StepLibrary library;
  std::unique_ptr<rt::BatchSource> source;
  double sgemmSecondsSpent = 0;
  double sgemmFlopsSpent = 0;
};

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_EVAL_H
