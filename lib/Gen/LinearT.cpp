//===- LinearT.cpp - bias-free linear layers in torch's layout ------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// y = x @ W^T with W : [out, in] (nn.Linear's weight), so that the llama
// step's parameters have the shapes of a Hugging Face state_dict.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/LlamaLayers.h"

using namespace mlir;
using namespace zshard::gen;

Value zshard::gen::linearTForward(StepBuilder &sb, Value x, Value w) {
  return sb.toAct(sb.matmul(x, w, /*transposeA=*/false, /*transposeB=*/true));
}

LinearTGrads zshard::gen::linearTBackward(StepBuilder &sb, Value dy, Value x,
                                          Value w, bool needDx) {
  LinearTGrads g;
  if (needDx)
    g.dx = sb.toAct(sb.matmul(dy, w));
  g.dw = sb.toAct(sb.matmul(dy, x, /*transposeA=*/true));
  return g;
}
