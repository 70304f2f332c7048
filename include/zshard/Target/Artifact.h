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
/// and init specs), written from the lowered step's ABI record
/// (`#zshard.step_abi`). docs/runtime.md is the format's contract.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TARGET_ARTIFACT_H
#define ZSHARD_TARGET_ARTIFACT_H

#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/abi/ManifestSchema.h"
#include "zshard/abi/Strategy.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir {
namespace zshard {

/// The ABI's strategy (zshard/abi/Strategy.h) of the dialect's: the one
/// place the two enums meet, checked value by value when it compiles.
::zshard_abi::Strategy toAbiStrategy(Strategy strategy);

/// The manifest dtype name of an element type ("f32", "bf16", "i32", ...),
/// or "" when the type has none.
std::string getDTypeName(Type elementType);

/// The canonical signature string of a step's ABI record: for each
/// argument `role:name:dtype:dims;`, then `->`, then each result likewise,
/// its role followed by `(in_place)` where the record marks it in place.
std::string getCanonicalSignature(StepABIAttr abi);

/// FNV-1a 64 of the canonical signature, as 16 lowercase hex digits.
std::string getSignatureHash(StepABIAttr abi);

/// The step ABI record of `module` (`zshard.abi`, written by
/// zshard-record-abi); fails with one line on the module when it has none.
FailureOr<StepABIAttr> getStepABI(ModuleOp module);

/// The manifest of a compiled step, written from the lowered module alone:
/// its step ABI record (arguments, results, units, grid, module facts,
/// target). With `eval`, the lowered eval entry, the manifest names it with
/// its signature and the peak of its memory plan (its record's
/// `peak_bytes`). Fails with one line when a record is missing.
FailureOr<llvm::json::Object> buildManifest(ModuleOp module,
                                            ModuleOp eval = {});

/// The text of `manifest.json`: `manifest` indented by two, and a newline.
std::string printManifest(llvm::json::Object manifest);

struct SharedObjectOptions {
  /// LLVM optimisation level, 0 to 3.
  unsigned optLevel = 3;
  /// CPU to compile for; "" or "native" means the host CPU (and its
  /// features).
  std::string cpu;
  /// The exported entry `void ENTRY(void **)` and its signature function
  /// `const char *ENTRY_signature(void)`.
  std::string entry = ::zshard_abi::manifest::kDefaultEntry;
};

/// Checks that `cpu` is a CPU of the native target (or "" / "native");
/// otherwise fails with a one-line `error` naming the host's CPU.
LogicalResult checkTargetCPU(StringRef cpu, std::string &error);

/// The object files of a compiled step: `code`, the functions it calls
/// (optimised at -O<level>), and `glue`, the step's straight line of calls
/// and its entry points (compiled as at -O0).
struct StepObjectFiles {
  std::string code;
  std::string glue;
};

/// The object files `DIR/STEM.o` and `DIR/STEM.glue.o`.
StepObjectFiles getStepObjectFiles(StringRef dir, StringRef stem);

/// Translates `lowered` (the step in the LLVM dialect, with bare-pointer
/// arguments) to LLVM IR, adds `ENTRY(void **)` and `ENTRY_signature()`
/// (ENTRY: options.entry, `zshard_step` by default), optimises, and writes
/// the object files `paths`. `llvmIR`, when given, receives the code's
/// module, then the glue's.
LogicalResult emitObjectFiles(ModuleOp lowered, StringRef stepName,
                              unsigned numBuffers, StringRef signature,
                              const StepObjectFiles &paths,
                              const SharedObjectOptions &options,
                              std::string *llvmIR = nullptr);

/// Links `objectPaths` into the shared object `soPath` with the system C
/// compiler driver.
LogicalResult linkSharedObject(ArrayRef<std::string> objectPaths,
                               StringRef soPath, std::string &error);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_TARGET_ARTIFACT_H
