//===- OptimizerAnalysis.h - per-parameter optimizer updates ----*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Finds, for each parameter of a training step, the elementwise
/// linalg.generic of the optimizer phase that produces its updated value:
/// which operand is its gradient, which are its optimizer state, which are
/// scalars, and which step result each of the op's results becomes. The
/// sharding pass rewrites exactly these ops onto shards.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_OPTIMIZERANALYSIS_H
#define ZSHARD_ANALYSIS_OPTIMIZERANALYSIS_H

#include "zshard/Analysis/PhaseAnalysis.h"
#include "zshard/Analysis/StepContract.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir {
namespace zshard {

/// How one parameter is updated.
struct ParamUpdate {
  /// The parameter argument.
  unsigned paramIndex = 0;
  /// The elementwise generic producing its param_out.
  linalg::GenericOp op;
  /// The op's input operand number holding the gradient.
  unsigned gradOperand = 0;
  /// For each op result: the step result it is returned as.
  SmallVector<unsigned> resultIndices;
};

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
