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
/// - `--mlir-print-debuginfo` and `--mlir-print-local-scope` are on: module
///   paths are name locations, which the contract needs and MLIR drops
///   without debug info, and local scope prints them inline;
/// - `--mlir-print-op-on-diagnostic` is off: no module dump after an error;
/// - `--help` lists the MLIR options and the passes, not LLVM's codegen and
///   debug options (`--help-hidden` still does).
/// Each default yields to the flag given explicitly
/// (`--mlir-print-debuginfo=false`).
///
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "zshard/InitAll.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/StringSaver.h"

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
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
