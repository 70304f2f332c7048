//===- CompileEval.h - the eval entry of an artifact ------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// zshard-compile --eval: the forward-only entry derived from the (sharded)
/// training step by zshard-extract-eval, lowered through the same pipeline
/// as the step, with its own memory plan, and written next to the step as
/// `eval.so` (entry `zshard_eval`), which the manifest's "eval" names.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEEVAL_H
#define ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEEVAL_H

#include "CompileOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

namespace zshard_compile {

/// Derives the eval step from `module` (a copy of the training step on
/// tensors, after sharding; consumed), lowers it and plans its memory (the
/// plan printed with --memory-report or `planOnly`). Unless `planOnly`,
/// compiles it into `dir`/eval.so and records "eval" in `manifest`. Prints
/// one line (or the diagnostics) and fails on any error.
mlir::LogicalResult compileEval(mlir::ModuleOp module,
                                const CompileOptions &options,
                                llvm::StringRef input, bool planOnly,
                                llvm::StringRef dir,
                                llvm::json::Object &manifest);

} // namespace zshard_compile

#endif // ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEEVAL_H
