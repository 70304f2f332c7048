//===- Layers.h - forward/backward pairs of the model layers ----*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The layers of docs/models.md, each as a forward builder and a backward
/// builder written out op by op (no autodiff). Forward builders return what
/// their backward needs in a cache struct. All ops are created at the
/// builder's current module path; the model files set it.
///
/// Token activations are 2-D `[N, D]` with `N = B * T`. Float results are
/// `act()` unless said otherwise; statistics (means, maxima, sums) are f32.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_GEN_LAYERS_H
#define ZSHARD_GEN_LAYERS_H

#include "zshard/Gen/StepBuilder.h"

namespace zshard::gen {

//===----------------------------------------------------------------------===//
// Linear: y = x @ W + b
//===----------------------------------------------------------------------===//

/// `x : [N, in]`, `w : [in, out]`, `bias : [out]` (or null) -> `[N, out]`.
mlir::Value linearForward(StepBuilder &sb, mlir::Value x, mlir::Value w,
                          mlir::Value bias);

struct LinearGrads {
  mlir::Value dx; ///< null unless asked for
  mlir::Value dw;
  mlir::Value db; ///< null without bias
};

/// `dx = dy @ W^T`, `dW = x^T @ dy`, `db = sum_n dy`.
LinearGrads linearBackward(StepBuilder &sb, mlir::Value dy, mlir::Value x,
                           mlir::Value w, bool hasBias, bool needDx);

//===----------------------------------------------------------------------===//
// GELU, tanh form
//===----------------------------------------------------------------------===//

mlir::Value geluForward(StepBuilder &sb, mlir::Value x);
/// `dy * gelu'(x)`.
mlir::Value geluBackward(StepBuilder &sb, mlir::Value dy, mlir::Value x);

//===----------------------------------------------------------------------===//
// LayerNorm over the last dim, biased variance, eps = 1e-5 inside the sqrt
//===----------------------------------------------------------------------===//

struct LayerNormCache {
  mlir::Value x;    ///< input `[N, D]`
  mlir::Value mean; ///< f32 `[N]`
  mlir::Value rstd; ///< f32 `[N]`, `1 / sqrt(var + eps)`
};

mlir::Value layerNormForward(StepBuilder &sb, mlir::Value x, mlir::Value w,
                             mlir::Value b, LayerNormCache &cache);

struct LayerNormGrads {
  mlir::Value dx, dw, db;
};

LayerNormGrads layerNormBackward(StepBuilder &sb, mlir::Value dy, mlir::Value w,
                                 const LayerNormCache &cache);

//===----------------------------------------------------------------------===//
// Embedding gather
//===----------------------------------------------------------------------===//

/// `table : [V, D]`, `ids : [B, T]` i32 -> `table[ids] : [B, T, D]`
/// (a linalg.generic with a tensor.extract in its body).
mlir::Value embeddingForward(StepBuilder &sb, mlir::Value table,
                             mlir::Value ids);

/// The gradient of the table, f32 `[V, D]`: `acc[ids[b, t], :] +=
/// dout[b, t, :]` for every token, in O(tokens x D): an `scf.forall` over the
/// D columns, each an `scf.for` over the tokens in order (so repeated tokens
/// sum) updating its column in place. Accumulates into `acc` (f32 `[V, D]`)
/// when given, else into zeros.
mlir::Value embeddingBackward(StepBuilder &sb, mlir::Value dout,
                              mlir::Value ids, int64_t vocab,
                              mlir::Value acc = nullptr);

/// `x[b, t, :] + table[t, :]` for `table : [T, D]` (learned positions).
mlir::Value addPositions(StepBuilder &sb, mlir::Value x, mlir::Value table);

//===----------------------------------------------------------------------===//
// Causal multi-head self-attention on the fused qkv
//===----------------------------------------------------------------------===//

struct AttentionShape {
  int64_t batch, seq, heads, headDim;
};

/// What the causal attention keeps for its backward: the f32 operands
/// `q : [B, H, T, hd]`, `k, v : [B, KV, T, hd]`, the output `out`
/// (q's shape) and the per-row logsumexp `lse : [B, H, T]`. Nothing of size
/// T x T: the backward recomputes the scores tile by tile.
struct AttentionCore {
  mlir::Value q, k, v, out, lse;
};

struct AttentionCache {
  AttentionShape shape;
  AttentionCore core;
};

/// `zshard.causal_attention` of split heads (`q : [B, H, T, hd]`, `k, v :
/// [B, KV, T, hd]`, converted to f32), scale 1/sqrt(hd); returns what it
/// keeps, `out` f32 `[B, H, T, hd]` among it.
AttentionCore causalAttentionForward(StepBuilder &sb, mlir::Value q,
                                     mlir::Value k, mlir::Value v);

struct AttentionCoreGrads {
  mlir::Value dq, dk, dv; ///< f32, the shapes of `q`, `k`, `v`
};

/// `zshard.causal_attention_grad` for `dout : [B, H, T, hd]`; dk and dv sum
/// over the heads of each kv head.
AttentionCoreGrads causalAttentionBackward(StepBuilder &sb, mlir::Value dout,
                                           const AttentionCore &core);

/// `qkv : [B*T, 3D]` (q, k, v in that order; head h takes columns
/// h*D/H .. (h+1)*D/H of each) -> `o : [B*T, D]`.
mlir::Value attentionForward(StepBuilder &sb, mlir::Value qkv,
                             AttentionShape shape, AttentionCache &cache);

/// `dout : [B*T, D]` -> `dqkv : [B*T, 3D]`.
mlir::Value attentionBackward(StepBuilder &sb, mlir::Value dout,
                              const AttentionCache &cache);

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

struct CrossEntropyCache {
  mlir::Value logits; ///< `[N, C]`
  mlir::Value labels; ///< `[N]` i32
  mlir::Value max;    ///< f32 `[N]`
  mlir::Value sumExp; ///< f32 `[N]`, `sum_c exp(logits - max)`
};

/// `mean_n(logsumexp(logits[n]) - logits[n, labels[n]])` as `tensor<f32>`.
mlir::Value crossEntropyForward(StepBuilder &sb, mlir::Value logits,
                                mlir::Value labels, CrossEntropyCache &cache);
/// `(softmax(logits) - onehot(labels)) / N`.
mlir::Value crossEntropyBackward(StepBuilder &sb,
                                 const CrossEntropyCache &cache);

/// `mean((y - target)^2)` over all elements, as `tensor<f32>`.
mlir::Value mseForward(StepBuilder &sb, mlir::Value y, mlir::Value target);
/// `(y - target) * 2 / numel`.
mlir::Value mseBackward(StepBuilder &sb, mlir::Value y, mlir::Value target);

//===----------------------------------------------------------------------===//
// Residual sum
//===----------------------------------------------------------------------===//

/// `a + b`, elementwise, in `act()`.
mlir::Value addTensors(StepBuilder &sb, mlir::Value a, mlir::Value b);

} // namespace zshard::gen

#endif // ZSHARD_GEN_LAYERS_H
