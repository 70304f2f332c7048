//===- OptimizerAnalysis.h - per-parameter optimizer updates ----*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Finds, for each parameter of a training step, the `zshard.adamw` of the
/// optimizer phase that produces its updated value, checks that it updates
/// the parameter from the parameter's own optimizer-state arguments and a
/// computed gradient, and records which step result each of the op's
/// results becomes. The sharding pass rewrites exactly these ops onto
/// shards.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_OPTIMIZERANALYSIS_H
#define ZSHARD_ANALYSIS_OPTIMIZERANALYSIS_H

#include "zshard/Analysis/PhaseAnalysis.h"
#include "zshard/Analysis/StepContract.h"

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

namespace mlir {
namespace zshard {

/// How one parameter is updated.
struct ParamUpdate {
  /// The parameter argument.
  unsigned paramIndex = 0;
  /// The update producing its param_out.
  AdamWOp op;
  /// For each op result: the step result it is returned as.
  SmallVector<unsigned> resultIndices;
};

/// The updates of all parameters of a step.
class OptimizerAnalysis {
public:
  OptimizerAnalysis(const StepContract &contract, const PhaseAnalysis &phases);

  /// Finds the update of every parameter; fails with a diagnostic naming the
  /// parameter whose update has another form.
  LogicalResult run();

  /// The update of parameter argument `paramIndex`, or null.
  const ParamUpdate *lookup(unsigned paramIndex) const;

private:
  const StepContract &contract;
  const PhaseAnalysis &phases;
  SmallVector<ParamUpdate> updates;
};

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_ANALYSIS_OPTIMIZERANALYSIS_H
