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

/// The canonical signature string of a step: for each argument
/// `role:name:dtype:dims;`, then `->`, then each result likewise, its role
/// followed by `(in_place)` where `inPlace` (indexed by result) is true.
std::string getCanonicalSignature(const StepContract &contract,
                                  ArrayRef<bool> inPlace = {});

/// FNV-1a 64 of the canonical signature, as 16 lowercase hex digits.
std::string getSignatureHash(const StepContract &contract,
                             ArrayRef<bool> inPlace = {});

/// Which results of `contract` the bufferized step `lowered` updates in
/// place (their out-parameters, after the arguments, are marked
/// zshard.in_place by zshard-update-in-place).
SmallVector<bool> getInPlaceResults(const StepContract &contract,
                                    func::FuncOp lowered);

/// Marks the in-place results of `manifest` ("in_place": true) and writes
/// the signature that covers them.
void recordInPlaceResults(llvm::json::Object &manifest,
                          const StepContract &contract, ArrayRef<bool> inPlace);

/// The manifest of a step whose contract has been read (before lowering).
llvm::json::Object buildManifest(const StepContract &contract, ModuleOp module);

/// Records the device the step was compiled for: "target" ("cpu" or
/// "cuda") and, for CUDA, the "chip" of its kernels (e.g. "sm_90"), so that
/// the runtime refuses to run it on another device.
void recordTarget(llvm::json::Object &manifest, StringRef target,
                  StringRef chip = "");

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
