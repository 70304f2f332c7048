//===- Llama.cpp - the llama training step --------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// A Llama decoder (docs/models.md), parameters named and shaped as a Hugging
// Face LlamaForCausalLM state_dict. Module paths of the ops:
//
//   model.embed_tokens                   embedding gather (and its gradient)
//   model.rotary_emb                     the RoPE cos / sin tables
//   model.layers.<i>.input_layernorm     RMSNorms
//   model.layers.<i>.post_attention_layernorm
//   model.layers.<i>.self_attn.q_proj    q, k, v, o projections
//   model.layers.<i>.self_attn           RoPE, GQA, causal softmax attention
//   model.layers.<i>                     residual sums
//   model.layers.<i>.mlp.gate_proj       gate, up, down projections
//   model.layers.<i>.mlp                 silu(gate) * up
//   model.norm, lm_head                  final RMSNorm, logits
//   ""                                   cross-entropy
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/DecoderStep.h"
#include "zshard/Gen/Layers.h"
#include "zshard/Gen/LlamaLayers.h"
#include "zshard/Gen/Models.h"
#include "zshard/Gen/StepSignature.h"

using namespace mlir;
using namespace zshard::gen;

namespace {
/// Parameter indices of one decoder layer.
struct LayerParams {
  unsigned q, k, v, o, gate, up, down, inNorm, postNorm;
};

/// What a layer's backward needs from its forward.
struct LayerCache {
  RmsNormCache inNorm, postNorm;
  Value a, attn, m, gate, up, h; // normed x, attn out, normed x, mlp parts
  GqaCache gqa;
};
} // namespace

int64_t zshard::gen::parameterCount(const LlamaConfig &cfg) {
  int64_t d = cfg.dModel, hd = cfg.dModel / cfg.heads;
  int64_t attn = 2 * d * d + 2 * d * cfg.kvHeads * hd;
  int64_t layer = attn + 3 * d * cfg.ffnHidden + 2 * d;
  return 2 * cfg.vocab * d + cfg.layers * layer + d;
}

OwningOpRef<ModuleOp> zshard::gen::buildLlamaStep(MLIRContext &ctx,
                                                  const LlamaConfig &cfg,
                                                  const GenOptions &opts) {
  OwningOpRef<ModuleOp> module = createStepModule(ctx, opts);
  // Ops outside a layer are at the root module path.
  ImplicitLocOpBuilder b(NameLoc::get(StringAttr::get(&ctx, "")), &ctx);
  StepBuilder sb(b, opts.dtype);
  StepSignature sig(sb);

  const int64_t D = cfg.dModel, V = cfg.vocab, T = cfg.seq, B = cfg.batch,
                H = cfg.heads, KV = cfg.kvHeads, F = cfg.ffnHidden, HD = D / H;
  const char *normal = "normal(0, 0.02)";

  // Parameters, in the order of a LlamaForCausalLM state_dict.
  unsigned embed = sig.addParam("model.embed_tokens.weight", {V, D}, normal);
  std::vector<LayerParams> layers;
  for (int64_t i = 0; i < cfg.layers; ++i) {
    std::string l = blockPath("model.layers", i) + ".";
    LayerParams p;
    p.q = sig.addParam(l + "self_attn.q_proj.weight", {H * HD, D}, normal);
    p.k = sig.addParam(l + "self_attn.k_proj.weight", {KV * HD, D}, normal);
    p.v = sig.addParam(l + "self_attn.v_proj.weight", {KV * HD, D}, normal);
    p.o = sig.addParam(l + "self_attn.o_proj.weight", {D, H * HD}, normal);
    p.gate = sig.addParam(l + "mlp.gate_proj.weight", {F, D}, normal);
    p.up = sig.addParam(l + "mlp.up_proj.weight", {F, D}, normal);
    p.down = sig.addParam(l + "mlp.down_proj.weight", {D, F}, normal);
    p.inNorm = sig.addParam(l + "input_layernorm.weight", {D}, "ones");
    p.postNorm =
        sig.addParam(l + "post_attention_layernorm.weight", {D}, "ones");
    layers.push_back(p);
  }
  unsigned norm = sig.addParam("model.norm.weight", {D}, "ones");
  unsigned head = sig.addParam("lm_head.weight", {V, D}, normal);
  // The classes of Hugging Face's LlamaForCausalLM, for wrapping by class.
  sig.addModuleClass("model", "LlamaModel");
  sig.addModuleClass("model.embed_tokens", "Embedding");
  addBlockClasses(sig, "model.layers", cfg.layers,
                  {{"", "LlamaDecoderLayer"},
                   {"self_attn", "LlamaAttention"},
                   {"self_attn.q_proj", "Linear"},
                   {"self_attn.k_proj", "Linear"},
                   {"self_attn.v_proj", "Linear"},
                   {"self_attn.o_proj", "Linear"},
                   {"mlp", "LlamaMLP"},
                   {"mlp.gate_proj", "Linear"},
                   {"mlp.up_proj", "Linear"},
                   {"mlp.down_proj", "Linear"},
                   {"input_layernorm", "LlamaRMSNorm"},
                   {"post_attention_layernorm", "LlamaRMSNorm"}});
  sig.addModuleClass("model.norm", "LlamaRMSNorm");
  sig.addModuleClass("lm_head", "Linear");
  createTokenStep(sig, sb, *module, B, T);

  auto P = [&](unsigned i) { return sig.param(i); };
  auto layerPath = [](int64_t i, StringRef sub) {
    return blockPath("model.layers", i, sub);
  };
  using Scope = StepBuilder::PathScope;
  GqaShape gqaShape{B, T, H, KV, HD};
  Value tokens = sig.batch("tokens"), targets = sig.batch("targets");

  //===------------------------------------------------------------------===//
  // Forward
  //===------------------------------------------------------------------===//

  Value x;
  {
    Scope s(sb, "model.embed_tokens");
    x = sb.collapse(embeddingForward(sb, P(embed), tokens), {{0, 1}, {2}});
  }
  RopeTables rope;
  {
    Scope s(sb, "model.rotary_emb");
    rope = ropeTables(sb, T, HD, cfg.ropeTheta);
  }
  auto linear = [&](int64_t i, StringRef path, Value in, unsigned w) {
    Scope s(sb, layerPath(i, path));
    return linearTForward(sb, in, P(w));
  };

  std::vector<LayerCache> caches(cfg.layers);
  for (int64_t i = 0; i < cfg.layers; ++i) {
    const LayerParams &p = layers[i];
    LayerCache &c = caches[i];
    {
      Scope s(sb, layerPath(i, "input_layernorm"));
      c.a = rmsNormForward(sb, x, P(p.inNorm), cfg.rmsEps, c.inNorm);
    }
    Value q = linear(i, "self_attn.q_proj", c.a, p.q);
    Value k = linear(i, "self_attn.k_proj", c.a, p.k);
    Value v = linear(i, "self_attn.v_proj", c.a, p.v);
    {
      Scope s(sb, layerPath(i, "self_attn"));
      c.attn = gqaForward(sb, q, k, v, gqaShape, rope, c.gqa);
    }
    Value y = linear(i, "self_attn.o_proj", c.attn, p.o);
    {
      Scope s(sb, layerPath(i, ""));
      x = addTensors(sb, x, y);
    }
    {
      Scope s(sb, layerPath(i, "post_attention_layernorm"));
      c.m = rmsNormForward(sb, x, P(p.postNorm), cfg.rmsEps, c.postNorm);
    }
    c.gate = linear(i, "mlp.gate_proj", c.m, p.gate);
    c.up = linear(i, "mlp.up_proj", c.m, p.up);
    {
      Scope s(sb, layerPath(i, "mlp"));
      c.h = swigluForward(sb, c.gate, c.up);
    }
    Value z = linear(i, "mlp.down_proj", c.h, p.down);
    {
      Scope s(sb, layerPath(i, ""));
      x = addTensors(sb, x, z);
    }
  }

  RmsNormCache normCache;
  Value xf, logits;
  {
    Scope s(sb, "model.norm");
    xf = rmsNormForward(sb, x, P(norm), cfg.rmsEps, normCache);
  }
  {
    Scope s(sb, "lm_head");
    logits = linearTForward(sb, xf, P(head));
  }
  Value loss, dlogits;
  {
    Scope s(sb, "");
    CrossEntropyCache ce;
    loss = crossEntropyForward(sb, logits, sb.collapse(targets, {{0, 1}}), ce);
    dlogits = crossEntropyBackward(sb, ce);
  }

  //===------------------------------------------------------------------===//
  // Backward
  //===------------------------------------------------------------------===//

  SmallVector<Value> grads(sig.params().size());
  Value dx;
  {
    Scope s(sb, "lm_head");
    LinearTGrads g = linearTBackward(sb, dlogits, xf, P(head), true);
    dx = g.dx;
    grads[head] = g.dw;
  }
  {
    Scope s(sb, "model.norm");
    RmsNormGrads g = rmsNormBackward(sb, dx, P(norm), normCache);
    dx = g.dx;
    grads[norm] = g.dw;
  }

  for (int64_t i = cfg.layers - 1; i >= 0; --i) {
    const LayerParams &p = layers[i];
    const LayerCache &c = caches[i];
    // Backward of `path`'s y = x @ W^T: stores W's gradient, returns dx.
    auto linearGrad = [&](StringRef path, Value dy, Value in, unsigned w) {
      Scope s(sb, layerPath(i, path));
      LinearTGrads g = linearTBackward(sb, dy, in, P(w), true);
      grads[w] = g.dw;
      return g.dx;
    };
    auto normGrad = [&](StringRef path, Value dy, unsigned w,
                        const RmsNormCache &cache) {
      Scope s(sb, layerPath(i, path));
      RmsNormGrads g = rmsNormBackward(sb, dy, P(w), cache);
      grads[w] = g.dw;
      return g.dx;
    };
    auto add = [&](Value a, Value b) {
      Scope s(sb, layerPath(i, ""));
      return addTensors(sb, a, b);
    };
    // x_out = x_mid + down(silu(gate(m)) * up(m)), m = norm(x_mid)
    Value dh = linearGrad("mlp.down_proj", dx, c.h, p.down);
    SwigluGrads sg;
    {
      Scope s(sb, layerPath(i, "mlp"));
      sg = swigluBackward(sb, dh, c.gate, c.up);
    }
    Value dm = add(linearGrad("mlp.gate_proj", sg.dgate, c.m, p.gate),
                   linearGrad("mlp.up_proj", sg.dup, c.m, p.up));
    dx = add(dx,
             normGrad("post_attention_layernorm", dm, p.postNorm, c.postNorm));
    // x_mid = x_in + o(gqa(q(a), k(a), v(a))), a = norm(x_in)
    Value dattn = linearGrad("self_attn.o_proj", dx, c.attn, p.o);
    GqaGrads ag;
    {
      Scope s(sb, layerPath(i, "self_attn"));
      ag = gqaBackward(sb, dattn, rope, c.gqa);
    }
    Value da = linearGrad("self_attn.q_proj", ag.dq, c.a, p.q);
    da = add(da, linearGrad("self_attn.k_proj", ag.dk, c.a, p.k));
    da = add(da, linearGrad("self_attn.v_proj", ag.dv, c.a, p.v));
    dx = add(dx, normGrad("input_layernorm", da, p.inNorm, c.inNorm));
  }

  {
    Scope s(sb, "model.embed_tokens");
    Value dx3 = sb.expand(dx, {B, T, D}, {{0, 1}, {2}});
    grads[embed] = sb.toAct(embeddingBackward(sb, dx3, tokens, V));
  }

  finishStep(sb, sig, loss, grads, opts);
  return module;
}
