//===- CompilerInternal.h - the compile library's parts ---------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the files of lib/Compiler share: how they report an error, and the
/// steps of compile() that are not passes (resolving the sharding request,
/// the eval entry).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_COMPILER_COMPILERINTERNAL_H
#define ZSHARD_LIB_COMPILER_COMPILERINTERNAL_H

#include "zshard/Analysis/CostModel.h"
#include "zshard/Compiler/Compiler.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/JSON.h"

namespace mlir {
namespace zshard {
namespace compiler {

/// Counts the errors diagnosed in a context while it lives (passing them on
/// to the handler below), so that a failure already explained gets no
/// second line.
class CompileErrors : public ScopedDiagnosticHandler {
public:
  explicit CompileErrors(MLIRContext *context);

  /// Emits `message` as an error without a location, unless an error was
  /// diagnosed already; fails.
  LogicalResult fail(const Twine &message);

  /// Emits `message` as an error without a location; fails.
  LogicalResult error(const Twine &message);

private:
  MLIRContext *context;
  unsigned numErrors = 0;
};

/// Completes `options.sharding` with what only the step tells -- that it
/// is not sharded yet, the units' pattern (found in the parameter names,
/// or the given one checked against them) -- and, for --auto, replaces the
/// request by the chosen candidate's passes (printing --auto's table).
LogicalResult resolveSharding(ModuleOp module, CompileOptions &options,
                              CompileErrors &errors);

/// Writes `text` to the file `path`.
LogicalResult writeFile(StringRef path, StringRef text, CompileErrors &errors);

/// The eval entry (zshard-compile --eval): derives the forward-only step
/// from `module` (a copy of the training step on tensors, after sharding;
/// consumed), lowers it and plans its memory (the plan printed with
/// memoryReport), recording the plan's peak in its ABI record
/// (`peak_bytes`). Unless `planOnly`, compiles it into `dir`/eval.so;
/// `module` is left lowered, for the manifest's "eval".
LogicalResult compileEval(ModuleOp module, const CompileOptions &options,
                          CompileErrors &errors, bool planOnly, StringRef dir);

} // namespace compiler
} // namespace zshard
} // namespace mlir

#endif // ZSHARD_LIB_COMPILER_COMPILERINTERNAL_H
