//===- Optimizer.cpp - AdamW update of one parameter ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
//   p = p - lr * wd * p              (rank >= 2 parameters only)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   p = p - lr * (m / bc1) / (sqrt(v / bc2) + eps)
//
// with bc1 = 1 - beta1^t, bc2 = 1 - beta2^t: one `zshard.adamw` per
// parameter in the `textbook` order (constants are f32 and the products
// associate left to right, as models.md writes them). With gradient
// clipping, g is first scaled by the clipping coefficient, the op's
// `grad_scale`.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/Optimizer.h"

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

// Not `using namespace mlir`: mlir::zshard (the dialect) would make
// `zshard::gen` ambiguous.
using mlir::AffineMap;
using mlir::APFloat;
using mlir::ArrayRef;
using mlir::SmallVector;
using mlir::Value;
using namespace zshard::gen;

using V = SmallVector<Value>;

AdamWOutputs zshard::gen::adamwUpdate(StepBuilder &sb, const AdamWInputs &in,
                                      const AdamWConfig &cfg) {
  mlir::ImplicitLocOpBuilder &b = sb.builder();
  auto op = mlir::zshard::AdamWOp::create(
      b, mlir::zshard::AdamWOrder::Textbook, in.param, in.grad, in.expAvg,
      in.expAvgSq, in.master, in.lr, in.step, in.gradScale, APFloat(cfg.beta1),
      APFloat(cfg.beta2), APFloat(cfg.eps),
      APFloat(in.decay ? cfg.weightDecay : 0.0));
  AdamWOutputs out;
  out.param = op.getNewParam();
  out.expAvg = op.getNewExpAvg();
  out.expAvgSq = op.getNewExpAvgSq();
  out.master = op.getNewMaster();
  return out;
}

Value zshard::gen::gradClipCoefficient(StepBuilder &sb,
                                       const StepSignature &sig,
                                       ArrayRef<Value> grads, float maxNorm) {
  const std::vector<ParamSpec> &params = sig.params();
  SmallVector<Operand> squares;
  AffineMap scalar = sb.identity(0);
  for (auto [grad, spec] : llvm::zip(grads, params)) {
    StepBuilder::PathScope scope(sb, ownerPath(spec.name));
    unsigned rank = spec.shape.size();
    SmallVector<mlir::utils::IteratorType> iters(rank, kRed);
    Value sum = sb.generic({{grad, sb.identity(rank)}},
                           {{sb.zeros({}, sb.f32()), sb.affineMap(rank, {})}},
                           iters, [](BodyBuilder &e, ArrayRef<Value> a) {
                             return V{e.add(a[1], e.mul(a[0], a[0]))};
                           })[0];
    squares.push_back({sum, scalar});
  }
  return sb.generic(squares, {{sb.empty({}, sb.f32()), scalar}}, {},
                    [&](BodyBuilder &e, ArrayRef<Value> a) {
                      Value total = a[0];
                      for (size_t i = 1; i < squares.size(); ++i)
                        total = e.add(total, a[i]);
                      Value norm = e.add(e.sqrt(total), e.cstF32(1e-6f));
                      return V{e.min(e.cstF32(1.0f),
                                     e.div(e.cstF32(maxNorm), norm))};
                    })[0];
}

void zshard::gen::applyAdamWAndReturn(StepBuilder &sb, StepSignature &sig,
                                      Value loss, ArrayRef<Value> grads,
                                      const AdamWConfig &cfg) {
  const std::vector<ParamSpec> &params = sig.params();
  assert(grads.size() == params.size() && "one gradient per parameter");
  SmallVector<Value> paramOuts;
  SmallVector<SmallVector<Value>> stateOuts(sig.slots().size());
  Value gradScale;
  if (cfg.maxGradNorm > 0)
    gradScale = gradClipCoefficient(sb, sig, grads, cfg.maxGradNorm);
  for (auto [i, spec] : llvm::enumerate(params)) {
    StepBuilder::PathScope scope(sb, ownerPath(spec.name));
    AdamWInputs in;
    in.param = sig.param(i);
    in.grad = grads[i];
    in.expAvg = sig.state(0, i);
    in.expAvgSq = sig.state(1, i);
    in.master = sig.hasMaster() ? sig.state(2, i) : Value();
    in.lr = sig.lr();
    in.step = sig.step();
    in.decay = spec.shape.size() >= 2;
    in.gradScale = gradScale;
    AdamWOutputs out = adamwUpdate(sb, in, cfg);
    paramOuts.push_back(out.param);
    stateOuts[0].push_back(out.expAvg);
    stateOuts[1].push_back(out.expAvgSq);
    if (sig.hasMaster())
      stateOuts[2].push_back(out.master);
  }
  sig.finish(loss, paramOuts, stateOuts);
}
