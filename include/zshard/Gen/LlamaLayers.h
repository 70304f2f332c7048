//===- LlamaLayers.h - the layers of the llama step -------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The layers the `llama` model adds to those of Layers.h (docs/models.md),
/// each as a forward builder and a hand-written backward builder: RMSNorm,
/// the SwiGLU gate, rotary position embeddings (HF Llama's rotate-half form)
/// and grouped-query attention. Linear layers here keep torch's `nn.Linear`
/// layout, `W : [out, in]`, `y = x @ W^T`, so that parameters have the shapes
/// of a Hugging Face Llama state_dict.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_GEN_LLAMALAYERS_H
#define ZSHARD_GEN_LLAMALAYERS_H

#include "zshard/Gen/Layers.h"
#include "zshard/Gen/StepBuilder.h"

namespace zshard::gen {

//===----------------------------------------------------------------------===//
// Linear without bias in torch's layout: y = x @ W^T
//===----------------------------------------------------------------------===//

/// `x : [N, in]`, `w : [out, in]` -> `[N, out]`.
mlir::Value linearTForward(StepBuilder &sb, mlir::Value x, mlir::Value w);

struct LinearTGrads {
  mlir::Value dx; ///< null unless asked for
  mlir::Value dw;
};

/// `dx = dy @ W`, `dW = dy^T @ x`.
LinearTGrads linearTBackward(StepBuilder &sb, mlir::Value dy, mlir::Value x,
                             mlir::Value w, bool needDx);

//===----------------------------------------------------------------------===//
// RMSNorm over the last dim: y = w * x / sqrt(mean(x^2) + eps)
//===----------------------------------------------------------------------===//

struct RmsNormCache {
  mlir::Value x;    ///< input `[N, D]`
  mlir::Value rstd; ///< f32 `[N]`, `1 / sqrt(mean(x^2) + eps)`
};

mlir::Value rmsNormForward(StepBuilder &sb, mlir::Value x, mlir::Value w,
                           double eps, RmsNormCache &cache);

struct RmsNormGrads {
  mlir::Value dx, dw;
};

/// `dx = rstd * (dxhat - xhat * mean(dxhat * xhat))` with `dxhat = dy * w`,
/// `dw = sum_n dy * xhat`.
RmsNormGrads rmsNormBackward(StepBuilder &sb, mlir::Value dy, mlir::Value w,
                             const RmsNormCache &cache);

//===----------------------------------------------------------------------===//
// SwiGLU: h = silu(gate) * up, silu(x) = x / (1 + exp(-x))
//===----------------------------------------------------------------------===//

mlir::Value swigluForward(StepBuilder &sb, mlir::Value gate, mlir::Value up);

struct SwigluGrads {
  mlir::Value dgate, dup;
};

SwigluGrads swigluBackward(StepBuilder &sb, mlir::Value dh, mlir::Value gate,
                           mlir::Value up);

//===----------------------------------------------------------------------===//
// Rotary position embeddings (rotate-half)
//===----------------------------------------------------------------------===//

struct RopeTables {
  mlir::Value cos, sin; ///< f32 `[T, hd/2]`, angle `t * theta^(-2j/hd)`
};

/// The cos and sin tables of positions `0 .. seq-1` for head dim `headDim`.
RopeTables ropeTables(StepBuilder &sb, int64_t seq, int64_t headDim,
                      double theta);

/// `x : [B, H, T, hd]` rotated: `x * cos + rotate_half(x) * sin` with
/// `rotate_half([x1, x2]) = [-x2, x1]` (cos and sin repeated on both halves).
mlir::Value ropeForward(StepBuilder &sb, mlir::Value x,
                        const RopeTables &tables);
/// The transpose rotation: `dx = dy * cos - rotate_half(dy) * sin`.
mlir::Value ropeBackward(StepBuilder &sb, mlir::Value dy,
                         const RopeTables &tables);

//===----------------------------------------------------------------------===//
// Grouped-query causal self-attention
//===----------------------------------------------------------------------===//

struct GqaShape {
  int64_t batch, seq, heads, kvHeads, headDim;
};

struct GqaCache {
  GqaShape shape;
  AttentionCore core; ///< rotated q, k `[B, H|KV, T, hd]`, v, out, lse
};

/// `q : [B*T, H*hd]`, `k, v : [B*T, KV*hd]` (before RoPE) -> `o : [B*T,
/// H*hd]`. Query head `h` attends with key/value head `h / (H / KV)`.
mlir::Value gqaForward(StepBuilder &sb, mlir::Value q, mlir::Value k,
                       mlir::Value v, GqaShape shape, const RopeTables &rope,
                       GqaCache &cache);

struct GqaGrads {
  mlir::Value dq, dk, dv; ///< `[B*T, H*hd]`, `[B*T, KV*hd]`, `[B*T, KV*hd]`
};

GqaGrads gqaBackward(StepBuilder &sb, mlir::Value dout, const RopeTables &rope,
                     const GqaCache &cache);

} // namespace zshard::gen

#endif // ZSHARD_GEN_LLAMALAYERS_H
