//===- SwiGlu.cpp - the SwiGLU gate of the llama MLP ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Forward:  s = 1 / (1 + exp(-g)), h = g * s * u         (silu(g) * u)
// Backward: dg = dh * u * s * (1 + g * (1 - s)), du = dh * g * s
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/LlamaLayers.h"

using namespace mlir;
using namespace zshard::gen;

using V = SmallVector<Value>;

static Value sigmoid(BodyBuilder &e, Value x) {
  return e.div(e.cst(1.0), e.add(e.cst(1.0), e.exp(e.sub(e.cst(0.0), x))));
}

Value zshard::gen::swigluForward(StepBuilder &sb, Value gate, Value up) {
  return sb.elementwise(sb.act(), {gate, up},
                        [](BodyBuilder &e, ArrayRef<Value> a) {
                          Value silu = e.mul(a[0], sigmoid(e, a[0]));
                          return V{e.mul(silu, a[1])};
                        });
}

SwigluGrads zshard::gen::swigluBackward(StepBuilder &sb, Value dh, Value gate,
                                        Value up) {
  SmallVector<int64_t> shape = StepBuilder::shapeOf(dh);
  AffineMap id = sb.identity(shape.size());
  SmallVector<Operand> outs{{sb.empty(shape, sb.act()), id},
                            {sb.empty(shape, sb.act()), id}};
  SmallVector<mlir::utils::IteratorType> iters(shape.size(), kPar);
  SmallVector<Value> r = sb.generic(
      {{dh, id}, {gate, id}, {up, id}}, outs, iters,
      [](BodyBuilder &e, ArrayRef<Value> a) {
        Value dhv = a[0], g = a[1], u = a[2];
        Value s = sigmoid(e, g);
        Value dsilu =
            e.mul(s, e.add(e.cst(1.0), e.mul(g, e.sub(e.cst(1.0), s))));
        return V{e.mul(e.mul(dhv, u), dsilu), e.mul(dhv, e.mul(g, s))};
      });
  return {r[0], r[1]};
}
