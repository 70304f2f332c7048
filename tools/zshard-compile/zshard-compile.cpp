//===- zshard-compile.cpp - training step -> artifact ---------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Compiles a training step with the compile library (zshard/Compiler) and
/// writes the artifact that zshard-run loads, `OUT.zsa/step.so` and
/// `OUT.zsa/manifest.json`, or the step as a phase left it
/// (`--compile-to=PHASE`, the text `--emit`s): the command line parsed into
/// CompileOptions, and one call.
///
//===----------------------------------------------------------------------===//

#include "CompileDiagnostics.h"
#include "CompileOptions.h"

#include "zshard/Compiler/Compiler.h"
#include "zshard/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
using namespace mlir::zshard;
using namespace zshard_compile;

namespace {
/// Writes `text` to `path`, or stdout for "-".
LogicalResult writeText(StringRef path, StringRef text) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file) {
    printError(StringRef(error).trim());
    return failure();
  }
  file->os() << text;
  file->keep();
  return success();
}

/// The module as `phase` left it. On tensors (up to schedule) it is printed
/// with its locations, inline as zshard-opt prints them by default, so that
/// diagnostics on the step zshard-compile takes again point into its input;
/// bufferized and lowered, without.
std::string printModule(ModuleOp module, CompilePhase phase) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (phase > CompilePhase::Schedule) {
    module->print(os);
    return text;
  }
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  flags.useLocalScope();
  module->print(os, flags);
  os << "\n";
  return text;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  std::optional<CommandLine> parsed = parseCommandLine(argc, argv);
  if (!parsed)
    return 1;
  const CommandLine &line = *parsed;

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name their location; a whole step printed after them would
  // bury the message.
  context.printOpOnDiagnostic(line.printOpOnDiagnostic);
  CompileDiagnostics diagnostics(&context, llvm::errs());
  // A failure that diagnostics explained needs no second line.
  auto fail = [&](const Twine &message) {
    if (diagnostics.getNumErrors() == 0)
      printError(message);
    return 1;
  };

  auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  std::string error;
  auto file = openInputFile(line.input, &error);
  if (!file)
    return fail(StringRef(error).trim());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + line.compile.inputName);
  double parseSeconds = seconds();

  CompileResult result;
  if (failed(compile(*module, line.compile, line.stopAfter, &result)))
    return 1;
  // Where the text outputs go: -o if given, else stdout.
  std::string textOutput = line.outputGiven ? line.output : "-";
  if (line.printModule)
    return failed(writeText(textOutput, printModule(*module, line.stopAfter)))
               ? 1
               : 0;
  if (line.emit == Emit::LLVMIR)
    return failed(writeText(textOutput, result.llvmIR)) ? 1 : 0;
  if (line.compile.timing && line.stopAfter == CompilePhase::Emit)
    llvm::errs() << llvm::formatv(
        "{{\"parse_s\": {0:f3}, \"lower_s\": {1:f3}, \"codegen_s\": {2:f3}, "
        "\"total_s\": {3:f3}}\n",
        parseSeconds, result.lowerSeconds, result.codegenSeconds, seconds());
  return 0;
}
