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
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "zshard/InitAll.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::zshard::registerAllDialects(registry);
  mlir::zshard::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "zshard optimizer driver\n", registry));
}
