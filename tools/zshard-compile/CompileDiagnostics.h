//===- CompileDiagnostics.h - zshard-compile's diagnostics ------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// How zshard-compile prints MLIR diagnostics: one line each, with the
/// place a person can find --
///
///   step.mlir:12:5: error: MESSAGE              (a file location)
///   step.mlir:12:5: error: MESSAGE (at h.0.attn) (a file and a module path)
///   zshard-compile: error: MESSAGE (at h.0.attn) (a module path)
///   zshard-compile: error: MESSAGE              (no location)
///
/// -- and notes the same way, after their diagnostic. No source excerpt
/// and no `<unknown>:0:` or `loc(""):` prefix.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEDIAGNOSTICS_H
#define ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

namespace zshard_compile {

/// Prints every diagnostic of a context to `os` while it lives.
class CompileDiagnostics : public mlir::ScopedDiagnosticHandler {
public:
  CompileDiagnostics(mlir::MLIRContext *context, llvm::raw_ostream &os);

  /// Errors printed so far.
  unsigned getNumErrors() const { return numErrors; }

private:
  void print(mlir::Diagnostic &diagnostic, bool isNote);

  llvm::raw_ostream &os;
  unsigned numErrors = 0;
};

} // namespace zshard_compile

#endif // ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEDIAGNOSTICS_H
