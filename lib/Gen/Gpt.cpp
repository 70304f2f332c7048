//===- Gpt.cpp - the gpt training step ------------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Pre-LayerNorm GPT-2 (docs/models.md). Module paths of the ops:
//
//   wte, wpe                      embedding gather / position add (and grads)
//   h.<i>.ln_1, h.<i>.ln_2        LayerNorms
//   h.<i>.attn.c_attn             qkv projection
//   h.<i>.attn                    split heads, scores, softmax, p @ v, merge
//   h.<i>.attn.c_proj             output projection
//   h.<i>                         residual sums
//   h.<i>.mlp.c_fc, h.<i>.mlp     up projection, GELU
//   h.<i>.mlp.c_proj              down projection
//   ln_f, lm_head                 final LayerNorm, logits
//   ""                            cross-entropy
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/DecoderStep.h"
#include "zshard/Gen/Layers.h"
#include "zshard/Gen/Models.h"
#include "zshard/Gen/StepSignature.h"

using namespace mlir;
using namespace zshard::gen;

namespace {
/// Parameter indices of one block.
struct BlockParams {
  unsigned ln1w, ln1b, attnW, attnB, projW, projB, ln2w, ln2b, fcW, fcB, mprojW,
      mprojB;
};

/// What a block's backward needs from its forward.
struct BlockCache {
  LayerNormCache ln1, ln2;
  Value a, o, m, f, g; // ln_1 out, attn out, ln_2 out, c_fc out, gelu out
  AttentionCache attn;
};
} // namespace

OwningOpRef<ModuleOp> zshard::gen::buildGptStep(MLIRContext &ctx,
                                                const GptConfig &cfg,
                                                const GenOptions &opts) {
  OwningOpRef<ModuleOp> module = createStepModule(ctx, opts);
  // Ops outside a block are at the root module path.
  ImplicitLocOpBuilder b(NameLoc::get(StringAttr::get(&ctx, "")), &ctx);
  StepBuilder sb(b, opts.dtype);
  StepSignature sig(sb);

  const int64_t D = cfg.dModel, V = cfg.vocab, T = cfg.seq, B = cfg.batch,
                H = cfg.heads;
  const char *normal = "normal(0, 0.02)";

  // Parameters, in the order of docs/models.md.
  unsigned wte = sig.addParam("wte", {V, D}, normal);
  unsigned wpe = sig.addParam("wpe", {T, D}, normal);
  std::vector<BlockParams> blocks;
  for (int64_t i = 0; i < cfg.layers; ++i) {
    std::string h = blockPath("h", i) + ".";
    BlockParams p;
    p.ln1w = sig.addParam(h + "ln_1.weight", {D}, "ones");
    p.ln1b = sig.addParam(h + "ln_1.bias", {D}, "zeros");
    p.attnW = sig.addParam(h + "attn.c_attn.weight", {D, 3 * D}, normal);
    p.attnB = sig.addParam(h + "attn.c_attn.bias", {3 * D}, "zeros");
    p.projW = sig.addParam(h + "attn.c_proj.weight", {D, D}, normal);
    p.projB = sig.addParam(h + "attn.c_proj.bias", {D}, "zeros");
    p.ln2w = sig.addParam(h + "ln_2.weight", {D}, "ones");
    p.ln2b = sig.addParam(h + "ln_2.bias", {D}, "zeros");
    p.fcW = sig.addParam(h + "mlp.c_fc.weight", {D, 4 * D}, normal);
    p.fcB = sig.addParam(h + "mlp.c_fc.bias", {4 * D}, "zeros");
    p.mprojW = sig.addParam(h + "mlp.c_proj.weight", {4 * D, D}, normal);
    p.mprojB = sig.addParam(h + "mlp.c_proj.bias", {D}, "zeros");
    blocks.push_back(p);
  }
  unsigned lnfW = sig.addParam("ln_f.weight", {D}, "ones");
  unsigned lnfB = sig.addParam("ln_f.bias", {D}, "zeros");
  unsigned lmHead =
      cfg.tied ? wte : sig.addParam("lm_head.weight", {D, V}, normal);
  // The classes of Hugging Face's GPT2LMHeadModel, for wrapping by class.
  addBlockClasses(sig, "h", cfg.layers,
                  {{"", "GPT2Block"},
                   {"ln_1", "LayerNorm"},
                   {"attn", "GPT2Attention"},
                   {"attn.c_attn", "Conv1D"},
                   {"attn.c_proj", "Conv1D"},
                   {"ln_2", "LayerNorm"},
                   {"mlp", "GPT2MLP"},
                   {"mlp.c_fc", "Conv1D"},
                   {"mlp.c_proj", "Conv1D"}});
  sig.addModuleClass("ln_f", "LayerNorm");
  if (!cfg.tied)
    sig.addModuleClass("lm_head", "Linear");
  createTokenStep(sig, sb, *module, B, T);

  auto P = [&](unsigned i) { return sig.param(i); };
  auto hPath = [](int64_t i, StringRef sub) { return blockPath("h", i, sub); };
  using Scope = StepBuilder::PathScope;
  AttentionShape attnShape{B, T, H, D / H};
  Value tokens = sig.batch("tokens"), targets = sig.batch("targets");

  //===------------------------------------------------------------------===//
  // Forward
  //===------------------------------------------------------------------===//

  Value x;
  {
    Scope s(sb, "wte");
    x = embeddingForward(sb, P(wte), tokens); // [B, T, D]
  }
  {
    Scope s(sb, "wpe");
    x = sb.collapse(addPositions(sb, x, P(wpe)), {{0, 1}, {2}}); // [N, D]
  }

  std::vector<BlockCache> caches(cfg.layers);
  for (int64_t i = 0; i < cfg.layers; ++i) {
    const BlockParams &p = blocks[i];
    BlockCache &c = caches[i];
    {
      Scope s(sb, hPath(i, "ln_1"));
      c.a = layerNormForward(sb, x, P(p.ln1w), P(p.ln1b), c.ln1);
    }
    Value qkv;
    {
      Scope s(sb, hPath(i, "attn.c_attn"));
      qkv = linearForward(sb, c.a, P(p.attnW), P(p.attnB));
    }
    {
      Scope s(sb, hPath(i, "attn"));
      c.o = attentionForward(sb, qkv, attnShape, c.attn);
    }
    Value y;
    {
      Scope s(sb, hPath(i, "attn.c_proj"));
      y = linearForward(sb, c.o, P(p.projW), P(p.projB));
    }
    {
      Scope s(sb, hPath(i, ""));
      x = addTensors(sb, x, y);
    }
    {
      Scope s(sb, hPath(i, "ln_2"));
      c.m = layerNormForward(sb, x, P(p.ln2w), P(p.ln2b), c.ln2);
    }
    {
      Scope s(sb, hPath(i, "mlp.c_fc"));
      c.f = linearForward(sb, c.m, P(p.fcW), P(p.fcB));
    }
    {
      Scope s(sb, hPath(i, "mlp"));
      c.g = geluForward(sb, c.f);
    }
    Value z;
    {
      Scope s(sb, hPath(i, "mlp.c_proj"));
      z = linearForward(sb, c.g, P(p.mprojW), P(p.mprojB));
    }
    {
      Scope s(sb, hPath(i, ""));
      x = addTensors(sb, x, z);
    }
  }

  LayerNormCache lnf;
  Value xf, logits;
  {
    Scope s(sb, "ln_f");
    xf = layerNormForward(sb, x, P(lnfW), P(lnfB), lnf);
  }
  {
    Scope s(sb, "lm_head");
    logits = sb.toAct(sb.matmul(xf, P(lmHead), /*transposeA=*/false,
                                /*transposeB=*/cfg.tied));
  }
  Value loss, dlogits;
  {
    Scope s(sb, "");
    Value flatTargets = sb.collapse(targets, {{0, 1}});
    CrossEntropyCache ce;
    loss = crossEntropyForward(sb, logits, flatTargets, ce);
    dlogits = crossEntropyBackward(sb, ce);
  }

  //===------------------------------------------------------------------===//
  // Backward
  //===------------------------------------------------------------------===//

  SmallVector<Value> grads(sig.params().size());
  Value dx, headGradF32; // headGradF32: tied only, f32 [V, D]
  {
    Scope s(sb, "lm_head");
    if (cfg.tied) {
      // logits = xf @ wte^T: dxf = dlogits @ wte, dwte += dlogits^T @ xf.
      dx = sb.toAct(sb.matmul(dlogits, P(wte)));
      headGradF32 = sb.matmul(dlogits, xf, /*transposeA=*/true);
    } else {
      LinearGrads g = linearBackward(sb, dlogits, xf, P(lmHead),
                                     /*hasBias=*/false, /*needDx=*/true);
      dx = g.dx;
      grads[lmHead] = g.dw;
    }
  }
  {
    Scope s(sb, "ln_f");
    LayerNormGrads g = layerNormBackward(sb, dx, P(lnfW), lnf);
    dx = g.dx;
    grads[lnfW] = g.dw;
    grads[lnfB] = g.db;
  }

  for (int64_t i = cfg.layers - 1; i >= 0; --i) {
    const BlockParams &p = blocks[i];
    const BlockCache &c = caches[i];
    // Backward of `path`'s y = x @ W + b: stores W's and b's gradients and
    // returns dx.
    auto linearGrad = [&](StringRef path, Value dy, Value x, auto w, auto b) {
      Scope s(sb, hPath(i, path));
      LinearGrads g = linearBackward(sb, dy, x, P(w), true, true);
      grads[w] = g.dw;
      grads[b] = g.db;
      return g.dx;
    };
    // Backward of `path`'s LayerNorm: stores its gradients and returns dx.
    auto layerNormGrad = [&](StringRef path, Value dy, auto w, auto b,
                             const auto &cache) {
      Scope s(sb, hPath(i, path));
      LayerNormGrads g = layerNormBackward(sb, dy, P(w), cache);
      grads[w] = g.dw;
      grads[b] = g.db;
      return g.dx;
    };
    // x_out = x_mid + mlp(ln_2(x_mid))
    Value dg = linearGrad("mlp.c_proj", dx, c.g, p.mprojW, p.mprojB);
    Value df;
    {
      Scope s(sb, hPath(i, "mlp"));
      df = geluBackward(sb, dg, c.f);
    }
    Value dm = linearGrad("mlp.c_fc", df, c.m, p.fcW, p.fcB);
    Value dmid = layerNormGrad("ln_2", dm, p.ln2w, p.ln2b, c.ln2);
    {
      Scope s(sb, hPath(i, ""));
      dx = addTensors(sb, dx, dmid);
    }
    // x_mid = x_in + c_proj(attn(c_attn(ln_1(x_in))))
    Value dO = linearGrad("attn.c_proj", dx, c.o, p.projW, p.projB);
    Value dqkv;
    {
      Scope s(sb, hPath(i, "attn"));
      dqkv = attentionBackward(sb, dO, c.attn);
    }
    Value da = linearGrad("attn.c_attn", dqkv, c.a, p.attnW, p.attnB);
    Value din = layerNormGrad("ln_1", da, p.ln1w, p.ln1b, c.ln1);
    {
      Scope s(sb, hPath(i, ""));
      dx = addTensors(sb, dx, din);
    }
  }

  Value dx3;
  {
    Scope s(sb, "wpe");
    dx3 = sb.expand(dx, {B, T, D}, {{0, 1}, {2}});
    grads[wpe] = sb.toAct(sb.sumLeading(dx3, 2));
  }
  {
    Scope s(sb, "wte");
    grads[wte] = sb.toAct(embeddingBackward(sb, dx3, tokens, V, headGradF32));
  }

  finishStep(sb, sig, loss, grads, opts);
  return module;
}
