//===- DecoderStep.cpp - what the gpt and llama steps share ---------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/DecoderStep.h"

#include "zshard/Gen/Optimizer.h"

using namespace mlir;
using namespace zshard::gen;

std::string zshard::gen::blockPath(StringRef prefix, int64_t i,
                                   StringRef sub) {
  std::string path = prefix.str() + "." + std::to_string(i);
  if (!sub.empty())
    path += "." + sub.str();
  return path;
}

void zshard::gen::addBlockClasses(StepSignature &sig, StringRef prefix,
                                  int64_t layers,
                                  ArrayRef<BlockClass> classes) {
  for (int64_t i = 0; i < layers; ++i)
    for (const BlockClass &c : classes)
      sig.addModuleClass(blockPath(prefix, i, c.sub), c.className);
}

void zshard::gen::createTokenStep(StepSignature &sig, StepBuilder &sb,
                                  ModuleOp module, int64_t batch,
                                  int64_t seq) {
  sig.addBatch("tokens", {batch, seq}, sb.i32());
  sig.addBatch("targets", {batch, seq}, sb.i32());
  sig.create(module);
}

void zshard::gen::finishStep(StepBuilder &sb, StepSignature &sig, Value loss,
                             ArrayRef<Value> grads, const GenOptions &opts) {
  AdamWConfig adamw;
  adamw.maxGradNorm = opts.maxGradNorm;
  applyAdamWAndReturn(sb, sig, loss, grads, adamw);
}
