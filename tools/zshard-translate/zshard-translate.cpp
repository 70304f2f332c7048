//===- zshard-translate.cpp - zshard translation driver -------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `zshard-translate` is `mlir-translate` with zshard's dialects and its
/// translations out of MLIR:
/// - `--zshard-to-manifest`: the artifact manifest of a lowered step (what
///   `zshard-compile --compile-to=lower` writes), from its step ABI record
///   alone, byte for byte as zshard-compile writes `manifest.json`.
///
//===----------------------------------------------------------------------===//

#include "zshard/InitAll.h"
#include "zshard/Target/Artifact.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

int main(int argc, char **argv) {
  TranslateFromMLIRRegistration manifest(
      "zshard-to-manifest",
      "Write the artifact manifest of a lowered step from its ABI record",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("zshard-to-manifest: expected a module");
        FailureOr<llvm::json::Object> manifest = zshard::buildManifest(module);
        if (failed(manifest))
          return failure();
        os << zshard::printManifest(std::move(*manifest));
        return success();
      },
      [](DialectRegistry &registry) { zshard::registerAllDialects(registry); });
  return failed(mlirTranslateMain(argc, argv, "zshard translation driver"));
}
