//===- Models.h - the models zshard-gen writes steps for --------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Configurations and step builders of the `mlp`, `gpt` and `llama` models of
/// docs/models.md. `validate` rejects impossible configurations with a
/// one-line message before anything is built; `build*Step` then writes one
/// module holding the contract's `func.func @train_step`.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_GEN_MODELS_H
#define ZSHARD_GEN_MODELS_H

#include "zshard/Gen/StepBuilder.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace zshard::gen {

/// Options common to every model.
struct GenOptions {
  DType dtype = DType::F32;
  /// Sets the module unit attribute `zshard.shapes_only` (the presets).
  bool shapesOnly = false;
  /// Global gradient-norm clipping (torch's clip_grad_norm_): every gradient
  /// is scaled by min(1, maxGradNorm / (||g||_2 + 1e-6)) before AdamW, the
  /// norm taken over all gradients together. 0 turns clipping off.
  float maxGradNorm = 0.0f;
};

struct MlpConfig {
  enum class Loss { Mse, Xent };
  std::vector<int64_t> widths; ///< d_0 .. d_L, at least two
  int64_t batch = 0;
  Loss loss = Loss::Mse;
};

struct GptConfig {
  int64_t layers = 0, dModel = 0, heads = 0, vocab = 0, seq = 0, batch = 0;
  bool tied = false;
};

/// The llama model (docs/models.md): RMSNorm, RoPE, grouped-query attention,
/// SwiGLU MLP, untied head, no biases.
struct LlamaConfig {
  int64_t layers = 0, dModel = 0, heads = 0, kvHeads = 0, ffnHidden = 0,
          vocab = 0, seq = 0, batch = 0;
  /// RoPE base.
  double ropeTheta = 10000.0;
  /// RMSNorm epsilon, inside the square root.
  double rmsEps = 1e-5;
};

/// An empty string when `cfg` can be built, else a one-line reason.
std::string validate(const MlpConfig &cfg);
std::string validate(const GptConfig &cfg);
std::string validate(const LlamaConfig &cfg);

/// The number of trained parameters of a valid llama configuration.
int64_t parameterCount(const LlamaConfig &cfg);

/// Loads the dialects a generated step uses (func, linalg, tensor, arith,
/// math) into `ctx` and returns the empty module of a step, located at the
/// root module path, marked `zshard.shapes_only` when `opts` asks.
mlir::OwningOpRef<mlir::ModuleOp> createStepModule(mlir::MLIRContext &ctx,
                                                   const GenOptions &opts);

/// The step module of a valid configuration.
mlir::OwningOpRef<mlir::ModuleOp> buildMlpStep(mlir::MLIRContext &ctx,
                                               const MlpConfig &cfg,
                                               const GenOptions &opts);
mlir::OwningOpRef<mlir::ModuleOp> buildGptStep(mlir::MLIRContext &ctx,
                                               const GptConfig &cfg,
                                               const GenOptions &opts);
mlir::OwningOpRef<mlir::ModuleOp> buildLlamaStep(mlir::MLIRContext &ctx,
                                                 const LlamaConfig &cfg,
                                                 const GenOptions &opts);

} // namespace zshard::gen

#endif // ZSHARD_GEN_MODELS_H
