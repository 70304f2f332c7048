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
// with bc1 = 1 - beta1^t, bc2 = 1 - beta2^t. Constants are f32 and the
// products associate left to right, as models.md writes them. With gradient
// clipping, g is first scaled by the clipping coefficient (a scalar operand
// of the update, so that the update keeps its one-gradient form).
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/Optimizer.h"

using namespace mlir;
using namespace zshard::gen;

using V = SmallVector<Value>;

BiasCorrections zshard::gen::adamwBiasCorrections(StepBuilder &sb, Value step,
                                                  const AdamWConfig &cfg) {
  AffineMap scalar = sb.identity(0);
  Value bc1 = sb.empty({}, sb.f32()), bc2 = sb.empty({}, sb.f32());
  SmallVector<Value> r =
      sb.generic({{step, scalar}}, {{bc1, scalar}, {bc2, scalar}}, {},
                 [&](BodyBuilder &e, ArrayRef<Value> a) {
                   Value one = e.cstF32(1.0f);
                   return V{e.sub(one, e.powf(e.cstF32(cfg.beta1), a[0])),
                            e.sub(one, e.powf(e.cstF32(cfg.beta2), a[0]))};
                 });
  return {r[0], r[1]};
}

AdamWOutputs zshard::gen::adamwUpdate(StepBuilder &sb, const AdamWInputs &in,
                                      const AdamWConfig &cfg) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(in.param);
  unsigned rank = shape.size();
  AffineMap id = sb.identity(rank), scalar = sb.affineMap(rank, {});
  bool mixed = static_cast<bool>(in.master);
  Value p = mixed ? in.master : in.param;

  SmallVector<Operand> outs{{sb.empty(shape, sb.f32()), id},
                            {sb.empty(shape, sb.f32()), id},
                            {sb.empty(shape, sb.f32()), id}};
  if (mixed)
    outs.push_back({sb.empty(shape, sb.act()), id});
  SmallVector<utils::IteratorType> iters(rank, kPar);
  SmallVector<Operand> ins{{p, id},
                           {in.grad, id},
                           {in.expAvg, id},
                           {in.expAvgSq, id},
                           {in.lr, scalar},
                           {in.bc.bc1, scalar},
                           {in.bc.bc2, scalar}};
  if (in.gradScale)
    ins.push_back({in.gradScale, scalar});
  SmallVector<Value> r = sb.generic(
      ins, outs, iters, [&](BodyBuilder &e, ArrayRef<Value> a) {
        Value pv = a[0], g = a[1], m = a[2], v = a[3], lr = a[4], bc1 = a[5],
              bc2 = a[6];
        if (in.gradScale)
          g = e.mul(g, a[7]);
        if (in.decay)
          pv = e.sub(pv, e.mul(e.mul(lr, e.cstF32(cfg.weightDecay)), pv));
        Value b1 = e.cstF32(cfg.beta1), b2 = e.cstF32(cfg.beta2);
        Value m2 = e.add(e.mul(b1, m), e.mul(e.cstF32(1.0f - cfg.beta1), g));
        Value v2 =
            e.add(e.mul(b2, v), e.mul(e.mul(e.cstF32(1.0f - cfg.beta2), g), g));
        Value mHat = e.div(m2, bc1);
        Value vHat = e.div(v2, bc2);
        Value denom = e.add(e.sqrt(vHat), e.cstF32(cfg.eps));
        Value p2 = e.sub(pv, e.div(e.mul(lr, mHat), denom));
        V results{p2, m2, v2};
        if (mixed)
          results.push_back(p2); // rounded to act() by the generic
        return results;
      });
  AdamWOutputs out;
  if (mixed) {
    out.master = r[0];
    out.param = r[3];
  } else {
    out.param = r[0];
  }
  out.expAvg = r[1];
  out.expAvgSq = r[2];
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
    SmallVector<utils::IteratorType> iters(rank, kRed);
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
    in.bc = adamwBiasCorrections(sb, sig.step(), cfg);
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
