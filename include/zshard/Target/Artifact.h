//===- Artifact.h - compiled step artifacts ---------------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writes the artifact `zshard-run` loads: a directory holding `step.so`
/// (the compiled step behind `zshard_step(void **buffers)`) and
/// `manifest.json` (arguments and results with roles, names, dtypes, shapes
/// and init specs). docs/runtime.md is the format's contract.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TARGET_ARTIFACT_H
#define ZSHARD_TARGET_ARTIFACT_H

#include "zshard/Analysis/StepContract.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir {
namespace zshard {

/// The manifest dtype name of an element type ("f32", "bf16", "i32", ...),
/// or "" when the type has none.
std::string getDTypeName(Type elementType);

/// The canonical signature string of a step: for each argument
/// `role:name:dtype:dims;`, then `->`, then each result likewise.
std::string getCanonicalSignature(const StepContract &contract);

/// FNV-1a 64 of the canonical signature, as 16 lowercase hex digits.
std::string getSignatureHash(const StepContract &contract);

/// The manifest of a step whose contract has been read (before lowering).
llvm::json::Object buildManifest(const StepContract &contract, ModuleOp module);

struct SharedObjectOptions {
  /// LLVM optimisation level, 0 to 3.
  unsigned optLevel = 3;
  /// CPU to tune for; "" means the host CPU.
  std::string cpu;
};

/// Translates `lowered` (the step in the LLVM dialect, with bare-pointer
/// arguments) to LLVM IR, adds `zshard_step(void **)` and
/// `zshard_step_signature()`, optimises, and writes an object file.
LogicalResult emitObjectFile(ModuleOp lowered, StringRef stepName,
                             unsigned numBuffers, StringRef signature,
                             StringRef objectPath,
                             const SharedObjectOptions &options,
                             std::string *llvmIR = nullptr);

/// Links `objectPath` into the shared object `soPath` with the system C
/// compiler driver.
LogicalResult linkSharedObject(StringRef objectPath, StringRef soPath,
                               std::string &error);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_TARGET_ARTIFACT_H
