//===- PhaseAnalysis.h - forward, backward, optimizer -----------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Derives the phase of every top-level op of a training step, by the rules
/// of docs/contract.md: forward is what the loss depends on; optimizer is the
/// rest that depends on optimizer state or hyper-parameters; backward is the
/// remainder of what depends on the batch; ops without inputs, and ops that
/// read only parameters and constants, take the earliest phase of their
/// users.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_PHASEANALYSIS_H
#define ZSHARD_ANALYSIS_PHASEANALYSIS_H

#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir {
namespace zshard {

// Phase (forward, backward, optimizer) and its `zshard.phase` attribute,
// #zshard.phase, are the dialect's (ZShardAttrs.td).

class PhaseAnalysis {
public:
  /// `step` is the step function; roles are read from its attributes.
  explicit PhaseAnalysis(func::FuncOp step);

  /// Derives the phases. Fails (without diagnostics) when the step has no
  /// loss result or its body is not a single block.
  LogicalResult run();

  /// The phase of a top-level op of the step (or of the top-level op holding
  /// `op`); std::nullopt for the terminator and ops outside the step.
  std::optional<Phase> getPhase(Operation *op) const;

  /// For a forward op that depends on optimizer state or a hyper-parameter
  /// (which the loss must not), the argument it depends on.
  std::optional<unsigned> getForwardStateDependence(Operation *op) const;

private:
  func::FuncOp step;
  llvm::DenseMap<Operation *, Phase> phases;
  llvm::DenseMap<Operation *, unsigned> forwardStateDependence;
};

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_ANALYSIS_PHASEANALYSIS_H
