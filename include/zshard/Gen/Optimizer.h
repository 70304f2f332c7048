//===- Optimizer.h - AdamW update of one parameter --------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// AdamW as docs/models.md writes it (torch.optim.AdamW semantics), one
/// `zshard.adamw` per parameter in the `textbook` order (f32 arithmetic in
/// the order of models.md; zshard-lower-adamw writes it out). For bf16
/// parameters the update runs on the f32 master copy and the new bf16
/// parameter is its rounding.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_GEN_OPTIMIZER_H
#define ZSHARD_GEN_OPTIMIZER_H

#include "zshard/Gen/StepBuilder.h"
#include "zshard/Gen/StepSignature.h"

namespace zshard::gen {

/// The compile-time constants of AdamW (models.md defaults), as the
/// zshard.adamw attributes hold them; the update rounds them to f32.
struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weightDecay = 0.1;
  /// Global gradient-norm clipping before the update; 0 is off.
  float maxGradNorm = 0.0f;
};

struct AdamWInputs {
  mlir::Value param;  ///< `act()`
  mlir::Value grad;   ///< `act()`
  mlir::Value expAvg; ///< f32
  mlir::Value expAvgSq;
  mlir::Value master; ///< f32 master copy, or null (f32 parameters)
  mlir::Value lr;     ///< `tensor<f32>`
  mlir::Value step;   ///< `tensor<f32>`, the step number (from 1)
  bool decay; ///< weight decay (rank >= 2 parameters)
  /// `tensor<f32>` the gradient is scaled by first (gradient clipping), or
  /// null.
  mlir::Value gradScale;
};

struct AdamWOutputs {
  mlir::Value param, expAvg, expAvgSq, master;
};

/// The clipping coefficient `min(1, maxNorm / (sqrt(sum_i sum(g_i^2)) +
/// 1e-6))` as `tensor<f32>`: one full reduction of each gradient's squares
/// (at the gradient's module path, in f32), then one scalar op summing them
/// in order.
mlir::Value gradClipCoefficient(StepBuilder &sb, const StepSignature &sig,
                                llvm::ArrayRef<mlir::Value> grads,
                                float maxNorm);

/// The `zshard.adamw` of one parameter, at the builder's module path.
AdamWOutputs adamwUpdate(StepBuilder &sb, const AdamWInputs &in,
                         const AdamWConfig &cfg);

/// Applies AdamW to every parameter of `sig` (gradient `grads[i]` for
/// parameter `i`), each at the module path owning the parameter, and writes
/// the step's `func.return`.
void applyAdamWAndReturn(StepBuilder &sb, StepSignature &sig, mlir::Value loss,
                         llvm::ArrayRef<mlir::Value> grads,
                         const AdamWConfig &cfg = AdamWConfig());

} // namespace zshard::gen

#endif // ZSHARD_GEN_OPTIMIZER_H
