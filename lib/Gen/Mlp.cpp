//===- Mlp.cpp - the mlp training step ------------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// h_0 = x, h_{i+1} = gelu(h_i @ W_i + b_i) for i < L-1, y = h_{L-1} @ W + b,
// loss = mse(y, target) or xent(y, labels). Layer i's ops (its linear and the
// GELU after it) carry the module path `fc.<i>` (zshard.path), the loss none.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/DecoderStep.h"
#include "zshard/Gen/Layers.h"
#include "zshard/Gen/Models.h"
#include "zshard/Gen/StepSignature.h"

using namespace mlir;
using namespace zshard::gen;

OwningOpRef<ModuleOp> zshard::gen::buildMlpStep(MLIRContext &ctx,
                                                const MlpConfig &cfg,
                                                const GenOptions &opts) {
  OwningOpRef<ModuleOp> module = createStepModule(ctx, opts);
  // Ops outside a block are at the root module path.
  ImplicitLocOpBuilder b(NameLoc::get(StringAttr::get(&ctx, "")), &ctx);
  StepBuilder sb(b, opts.dtype);
  StepSignature sig(sb);

  const size_t layers = cfg.widths.size() - 1;
  const int64_t batch = cfg.batch;
  bool xent = cfg.loss == MlpConfig::Loss::Xent;
  for (size_t i = 0; i < layers; ++i) {
    std::string prefix = "fc." + std::to_string(i);
    sig.addParam(prefix + ".weight", {cfg.widths[i], cfg.widths[i + 1]},
                 "normal(0, 0.02)");
    sig.addParam(prefix + ".bias", {cfg.widths[i + 1]}, "zeros");
  }
  sig.addBatch("x", {batch, cfg.widths.front()}, sb.f32());
  if (xent)
    sig.addBatch("labels", {batch}, sb.i32());
  else
    sig.addBatch("target", {batch, cfg.widths.back()}, sb.f32());
  sig.create(*module);

  auto path = [](size_t i) { return "fc." + std::to_string(i); };
  auto weight = [&](size_t i) { return sig.param(2 * i); };
  auto bias = [&](size_t i) { return sig.param(2 * i + 1); };

  // Forward. inputs[i] is the input of layer i, preacts[i] its linear output.
  SmallVector<Value> inputs, preacts;
  Value h;
  {
    StepBuilder::PathScope scope(sb, path(0));
    h = sb.toAct(sig.batch("x"));
  }
  for (size_t i = 0; i < layers; ++i) {
    StepBuilder::PathScope scope(sb, path(i));
    inputs.push_back(h);
    Value y = linearForward(sb, h, weight(i), bias(i));
    preacts.push_back(y);
    h = i + 1 < layers ? geluForward(sb, y) : y;
  }

  Value loss, dy;
  {
    StepBuilder::PathScope scope(sb, "");
    if (xent) {
      CrossEntropyCache cache;
      loss = crossEntropyForward(sb, h, sig.batch("labels"), cache);
      dy = crossEntropyBackward(sb, cache);
    } else {
      loss = mseForward(sb, h, sig.batch("target"));
      dy = mseBackward(sb, h, sig.batch("target"));
    }
  }

  // Backward.
  SmallVector<Value> grads(2 * layers);
  for (size_t i = layers; i-- > 0;) {
    StepBuilder::PathScope scope(sb, path(i));
    if (i + 1 < layers)
      dy = geluBackward(sb, dy, preacts[i]);
    LinearGrads g = linearBackward(sb, dy, inputs[i], weight(i),
                                   /*hasBias=*/true, /*needDx=*/i > 0);
    grads[2 * i] = g.dw;
    grads[2 * i + 1] = g.db;
    dy = g.dx;
  }

  finishStep(sb, sig, loss, grads, opts);
  return module;
}
