//===- CompileOptions.h - zshard-compile's command line ---------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The command line of zshard-compile, read and checked: every misuse that
/// can be seen without the input (an option given twice, an out-of-range
/// value, an unknown -mcpu, --ranks without a strategy, ...) is one line
/// on stderr before anything is compiled.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEOPTIONS_H
#define ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEOPTIONS_H

#include "zshard/Compiler/Compiler.h"

#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>

namespace zshard_compile {

enum class Emit { Artifact, ShardedMLIR, LoweredMLIR, LLVMIR, MemoryPlan };

/// zshard-compile's command line, checked: where the step comes from, what
/// is written, and the compile library's options.
struct CommandLine {
  std::string input;
  /// -o; for the text outputs, stdout when not given.
  std::string output;
  bool outputGiven = false;
  Emit emit = Emit::Artifact;
  /// The phase compile() stops after (--compile-to, or the one --emit
  /// implies).
  mlir::zshard::CompilePhase stopAfter = mlir::zshard::CompilePhase::Emit;
  /// Write the module as the phase left it (--compile-to before emit,
  /// --emit=sharded-mlir, --emit=lowered-mlir).
  bool printModule = false;
  /// --mlir-print-op-on-diagnostic was given.
  bool printOpOnDiagnostic = false;
  mlir::zshard::CompileOptions compile;
};

/// Parses and checks the command line. On a misuse prints one line to
/// stderr and returns std::nullopt (exit status 1); with no input on a
/// terminal prints the usage instead.
std::optional<CommandLine> parseCommandLine(int argc, char **argv);

/// Prints `zshard-compile: error: MESSAGE` to stderr.
void printError(const llvm::Twine &message);

/// How a user types `option`: `-O`, `--ranks`.
std::string spellOption(const llvm::cl::Option &option);

} // namespace zshard_compile

#endif // ZSHARD_TOOLS_ZSHARD_COMPILE_COMPILEOPTIONS_H
