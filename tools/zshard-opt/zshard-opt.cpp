//===- zshard-opt.cpp - zshard optimizer driver ---------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `zshard-opt` parses, verifies and transforms MLIR with the upstream dialects
/// of the training-step contract, the zshard dialect, and the zshard and
/// upstream passes. Every zshard pass is testable alone through it.
///
/// It is `mlir-opt` with other defaults, so that its output feeds the next
/// tool and its diagnostics read as one line each:
/// - `--mlir-print-debuginfo` and `--mlir-print-local-scope` are on: a step
///   piped from one zshard-opt into the next keeps its file locations, so
///   diagnostics point into the first file, and local scope prints them
///   inline (module paths are `zshard.path` attributes and need neither);
/// - `--mlir-print-op-on-diagnostic` is off: no module dump after an error;
/// - `--help` lists the MLIR options and the passes, not LLVM's codegen and
///   debug options (`--help-hidden` still does);
/// - a pass option value its parser refuses (`--zshard-remat=policy=every=0`)
///   is reported on the one line the parser writes, without the empty
///   `<unknown>:0: error:` MLIR adds after it.
/// Each default yields to the flag given explicitly
/// (`--mlir-print-debuginfo=false`).
///
//===----------------------------------------------------------------------===//

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "zshard/InitAll.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/ToolOutputFile.h"

namespace {

/// Sets the default of the registered boolean option `name`, so that an
/// explicit `--name=VALUE` still overrides it, and says so in `--help`.
void setDefault(llvm::StringRef name, bool value) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  if (it == options.end())
    return;
  // MLIR registers these flags as cl::opt<bool>.
  auto *option = static_cast<llvm::cl::opt<bool> *>(it->second);
  option->setInitialValue(value);
  static llvm::BumpPtrAllocator allocator;
  static llvm::StringSaver saver(allocator);
  option->setDescription(saver.save(option->HelpStr + " (default " +
                                    (value ? "on" : "off") +
                                    " in zshard-opt)"));
}

/// Hides from `--help` every option in `before` (those LLVM's libraries
/// register statically, before main) except the few a zshard-opt user needs.
void hideLibraryOptions(const llvm::StringSet<> &before) {
  static const llvm::StringSet<> kept = {"help", "help-list", "version",
                                         "debug-only", "debug"};
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    if (!before.contains(entry.first) || kept.contains(entry.first))
      continue;
    if (entry.second->getOptionHiddenFlag() == llvm::cl::NotHidden)
      entry.second->setHiddenFlag(llvm::cl::Hidden);
  }
}

/// mlir::MlirOptMain(argc, argv, input, output, registry) with the command
/// line's pipeline setup wrapped: an option parser reports a value it
/// refuses itself (`zshard-opt: for the --policy option: every=K needs a
/// positive K, got '0'`) and leaves MLIR no message, so MLIR's error at an
/// unknown location would be empty; that one is dropped.
mlir::LogicalResult runOpt(int argc, char **argv, llvm::StringRef input,
                           llvm::StringRef output,
                           mlir::DialectRegistry &registry) {
  llvm::InitLLVM init(argc, argv);
  mlir::MlirOptMainConfig commandLine =
      mlir::MlirOptMainConfig::createFromCLOptions();
  mlir::MlirOptMainConfig config = commandLine;
  config.setPassPipelineSetupFn([commandLine](mlir::PassManager &pm) {
    mlir::ScopedDiagnosticHandler dropEmpty(
        pm.getContext(), [](mlir::Diagnostic &diag) {
          return mlir::success(
              diag.getSeverity() == mlir::DiagnosticSeverity::Error &&
              llvm::isa<mlir::UnknownLoc>(diag.getLocation()) &&
              diag.str().empty());
        });
    return commandLine.setupPassPipeline(pm);
  });

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(input, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return mlir::failure();
  }
  std::unique_ptr<llvm::ToolOutputFile> out =
      mlir::openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << error << "\n";
    return mlir::failure();
  }
  if (mlir::failed(
          mlir::MlirOptMain(out->os(), std::move(file), registry, config)))
    return mlir::failure();
  out->keep();
  return mlir::success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::StringSet<> before;
  for (auto &entry : llvm::cl::getRegisteredOptions())
    before.insert(entry.first);

  mlir::DialectRegistry registry;
  mlir::zshard::registerAllDialects(registry);
  mlir::zshard::registerAllPasses();
  std::string helpHeader =
      mlir::registerCLIOptions("zshard optimizer driver", registry);
  setDefault("mlir-print-debuginfo", true);
  setDefault("mlir-print-local-scope", true);
  setDefault("mlir-print-op-on-diagnostic", false);
  hideLibraryOptions(before);

  auto [inputFilename, outputFilename] =
      mlir::parseCLIOptions(argc, argv, helpHeader);
  return mlir::asMainReturnCode(
      runOpt(argc, argv, inputFilename, outputFilename, registry));
}
