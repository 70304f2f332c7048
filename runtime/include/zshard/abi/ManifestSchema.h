//===- ManifestSchema.h - the artifact manifest's schema --------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The schema of an artifact's manifest.json (docs/runtime.md, "Artifacts"):
/// its format name, its version and the names of its fields. The compiler
/// writes manifests with these names (lib/Target/Manifest.cpp) and the
/// runtime reads them with the same (runtime/lib/step/Manifest*.cpp), so a
/// field is spelt once.
///
/// `version` is the schema's major version: it changes when a field is
/// renamed, removed or changes meaning, and a reader refuses any other
/// major version. Adding an optional field that old readers may ignore
/// keeps the version.
///
/// Header-only C++17 with no LLVM or MLIR dependency.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ABI_MANIFESTSCHEMA_H
#define ZSHARD_ABI_MANIFESTSCHEMA_H

#include <cstdint>

namespace zshard_abi::manifest {

/// The value of `format`.
inline constexpr const char *kFormatName = "zshard-artifact";
/// The value of `version`: the major version of this schema. 2: the step
/// library's matrix products (zshard_rt_step_sgemm, _gemm_bf16) take a last
/// `accumulate` argument, so a step library of version 1 must not run.
inline constexpr int64_t kVersion = 2;
/// The manifest's file name inside the artifact directory.
inline constexpr const char *kFileName = "manifest.json";
/// The step library and its entry symbol as the compiler writes them.
inline constexpr const char *kDefaultLibrary = "step.so";
inline constexpr const char *kDefaultEntry = "zshard_step";

/// The library of the forward-only eval entry (zshard-compile --eval) and
/// its entry symbol. Every entry `E` comes with `const char *E_signature()`.
inline constexpr const char *kDefaultEvalLibrary = "eval.so";
inline constexpr const char *kDefaultEvalEntry = "zshard_eval";
/// The suffix of an entry's signature function.
inline constexpr const char *kSignatureSuffix = "_signature";

/// Top-level fields.
inline constexpr const char *kFormat = "format";
inline constexpr const char *kVersionKey = "version";
inline constexpr const char *kLibrary = "library";
inline constexpr const char *kEntry = "entry";
inline constexpr const char *kSignature = "signature";
inline constexpr const char *kRanks = "ranks";
inline constexpr const char *kGrid = "grid";
inline constexpr const char *kModule = "module";
inline constexpr const char *kArguments = "arguments";
inline constexpr const char *kResults = "results";
inline constexpr const char *kUnits = "units";
/// The device the step was compiled for ("cpu" or "cuda") and a CUDA
/// step's SM architecture.
inline constexpr const char *kTarget = "target";
inline constexpr const char *kChip = "chip";

/// The optional eval entry: an object with `library`, `entry`, `signature`
/// (of the arguments, then the loss alone) and `peak_bytes` (its static
/// per-rank memory plan's peak: the runtime-held arguments and loss plus
/// what the eval entry allocates). It takes the step's argument buffers,
/// then one buffer for the loss.
inline constexpr const char *kEval = "eval";
inline constexpr const char *kPeakBytes = "peak_bytes";

/// Fields of an argument or a result; several are shared with units and
/// the grid (`name`, `shape`, `dtype`).
inline constexpr const char *kIndex = "index";
inline constexpr const char *kRole = "role";
inline constexpr const char *kName = "name";
inline constexpr const char *kDType = "dtype";
inline constexpr const char *kShape = "shape";
inline constexpr const char *kInit = "init";
inline constexpr const char *kParam = "param";
inline constexpr const char *kUnit = "unit";
inline constexpr const char *kSlot = "slot";
inline constexpr const char *kPlacement = "placement";
/// A hyper's recorded value (from the step's `zshard.default`).
inline constexpr const char *kDefault = "default";
/// A buffer argument's flag: whether checkpoints hold it.
inline constexpr const char *kPersistent = "persistent";
/// A result the step writes into its argument's buffer.
inline constexpr const char *kInPlace = "in_place";

/// Fields of a unit, its members and its slots.
inline constexpr const char *kStrategy = "strategy";
inline constexpr const char *kShardAxes = "shard_axes";
inline constexpr const char *kReplicateAxes = "replicate_axes";
inline constexpr const char *kPadded = "padded";
inline constexpr const char *kShardSize = "shard_size";
inline constexpr const char *kParamDType = "param_dtype";
inline constexpr const char *kReduceDType = "reduce_dtype";
/// The type a unit's buffers are computed with (FSDP's buffer_dtype); absent
/// when they are used in their own.
inline constexpr const char *kBufferDType = "buffer_dtype";
inline constexpr const char *kMembers = "members";
inline constexpr const char *kSlots = "slots";
inline constexpr const char *kOffset = "offset";
inline constexpr const char *kInits = "inits";

/// Values of `placement` and `target`.
inline constexpr const char *kPlacementDevice = "device";
inline constexpr const char *kPlacementHost = "host";
inline constexpr const char *kTargetCpu = "cpu";
inline constexpr const char *kTargetCuda = "cuda";

} // namespace zshard_abi::manifest

#endif // ZSHARD_ABI_MANIFESTSCHEMA_H
