//===- DecoderStep.h - what the gpt and llama steps share -------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pieces the decoder steps (`gpt`, `llama`) write alike: the module
/// path of a block's sub-module, the table of module classes repeated per
/// block, the token / target batch inputs, and the AdamW tail every step
/// (`mlp` too) ends with.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_GEN_DECODERSTEP_H
#define ZSHARD_GEN_DECODERSTEP_H

#include "zshard/Gen/Models.h"
#include "zshard/Gen/StepSignature.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace zshard::gen {

/// The module path `<prefix>.<i>`, or `<prefix>.<i>.<sub>` when `sub` is not
/// empty (`blockPath("model.layers", 3, "mlp")` is `model.layers.3.mlp`).
std::string blockPath(llvm::StringRef prefix, int64_t i,
                      llvm::StringRef sub = "");

/// One row of a per-block class table: the sub-module (empty: the block
/// itself) and its torch class.
struct BlockClass {
  const char *sub;
  const char *className;
};

/// Records `classes` for every block `<prefix>.0` .. `<prefix>.<layers-1>`,
/// block by block in table order.
void addBlockClasses(StepSignature &sig, llvm::StringRef prefix,
                     int64_t layers, llvm::ArrayRef<BlockClass> classes);

/// Declares the `tokens` and `targets` batch inputs (`[batch, seq]` i32) and
/// creates the step function in `module`.
void createTokenStep(StepSignature &sig, StepBuilder &sb,
                     mlir::ModuleOp module, int64_t batch, int64_t seq);

/// AdamW (with `opts.maxGradNorm` clipping) on every parameter of `sig`
/// and the step's `func.return`.
void finishStep(StepBuilder &sb, StepSignature &sig, mlir::Value loss,
                llvm::ArrayRef<mlir::Value> grads, const GenOptions &opts);

} // namespace zshard::gen

#endif // ZSHARD_GEN_DECODERSTEP_H
