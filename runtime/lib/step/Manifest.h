//===- Manifest.h - The manifest of a compiled artifact ---------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// An artifact (format v1) is a directory NAME.zsa/ holding manifest.json and
/// the step library it names. The manifest describes the step's arguments and
/// results (roles, names, dtypes, shapes, init specs; docs/contract.md) in
/// buffer order, and carries the signature that ties it to its library. See
/// docs/runtime.md, "Artifacts", for the format.
///
/// A sharded artifact (one SPMD program for every rank) also names its device
/// grid and its units: flat, padded buffers of parameters, each rank holding
/// one contiguous shard of every sharded unit (param_shard and
/// opt_state_shard arguments). See docs/runtime.md, "Sharded runs".
///
/// loadManifest() checks everything it can without loading the library and
/// throws a Failure "<manifest path>: <problem>" for the first problem.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_MANIFEST_H
#define ZSHARD_RUNTIME_LIB_STEP_MANIFEST_H

#include "core/DType.h"
#include "core/InitSpec.h"

#include "zshard/abi/Roles.h"
#include "zshard/abi/Strategy.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zshard::rt {

/// Roles of arguments and results and their names ("param", ..., "buffer";
/// "loss", ...): zshard/abi/Roles.h, shared with the compiler.
using ::zshard_abi::ArgRole;
using ::zshard_abi::ResultRole;
using ::zshard_abi::roleName;
inline constexpr const auto &allArgRoles = ::zshard_abi::kAllArgRoles;

/// Whether arguments of \p role are state: saved, loaded, initialised and
/// updated by the step (param, opt_state and their shards).
bool isStateRole(ArgRole role);
/// Whether arguments of \p role hold a shard of a unit.
bool isShardRole(ArgRole role);

/// Element type and shape of a dense row-major buffer.
struct TensorType {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t elements = 1;
  uint64_t bytes = 0;
};

/// Where the runtime keeps an argument: device memory or the host pool
/// (optimizer state the compiler offloaded).
enum class Placement { Device, Host };

struct ArgumentDesc {
  int64_t index = 0;
  ArgRole role = ArgRole::Param;
  std::string name;
  TensorType type;
  std::string initText; ///< param, opt_state and buffer only.
  InitSpec init;        ///< parsed initText.
  std::string param;    ///< opt_state only: the parameter it belongs to.
  std::string unit;     ///< param_shard and opt_state_shard: the unit.
  std::string slot;     ///< opt_state_shard: the slot ("exp_avg", ...).
  Placement placement = Placement::Device; ///< host: opt_state(_shard) only.
  /// buffer only: checkpoints (rank, full, --save-torch) hold it.
  bool persistent = false;
  /// hyper only: the value the producer recorded ("default"), e.g. the
  /// exporter's optimizer's lr; the launcher uses it unless told otherwise.
  std::optional<double> defaultValue;
};

/// Whether checkpoints hold \p arg: state (param, opt_state and their
/// shards) and persistent buffers.
bool isCheckpointed(const ArgumentDesc &arg);

struct ResultDesc {
  int64_t index = 0;
  ResultRole role = ResultRole::Loss;
  std::string name; ///< "" for the loss.
  TensorType type;
  int64_t argument = -1; ///< param_out/opt_state_out: the argument updated.
  /// param_shard_out and opt_state_shard_out: the unit and slot of the
  /// argument they update, as the compiler records them ("" if absent).
  std::string unit;
  std::string slot;
  /// The step writes the update into the argument's buffer: the runtime
  /// passes that buffer for this result and holds no second one.
  bool inPlace = false;
};

/// The device grid of a sharded artifact: the ranks laid out row-major over
/// shape (the last axis fastest), as zshard_rt_grid_create builds it.
struct GridDesc {
  std::string name;
  std::vector<int64_t> shape;
};

/// How a unit is sharded (zshard/abi/Strategy.h): no_shard's parameters
/// and optimizer state are ordinary param and opt_state arguments; zero1's
/// optimizer state is opt_state_shard arguments and its parameters param
/// arguments; the other strategies have param_shard and opt_state_shard
/// arguments.
using ShardStrategy = zshard_abi::Strategy;
using zshard_abi::strategyName;

/// A parameter inside a unit's flat buffer: elements [offset, offset +
/// elements) of it.
struct UnitMember {
  std::string name;
  std::vector<int64_t> shape;
  uint64_t elements = 1;
  uint64_t offset = 0;
  std::string initText; ///< "" when absent (members that are params).
  InitSpec init;
};

/// One optimizer state slot of a unit: a flat buffer laid out as the
/// parameters, holding member m's state "<member>.<slot>" at its offset.
struct UnitSlot {
  std::string name; ///< "exp_avg", "master", ...
  DType dtype = DType::F32;
  std::vector<std::string> initTexts; ///< One per member.
  std::vector<InitSpec> inits;        ///< Parsed initTexts.
};

/// A unit: parameters flattened into one padded buffer of padded elements
/// (members at their offsets, zero elsewhere), split into equal shards of
/// shardSize elements over the grid axes shardAxes. The rank whose
/// (row-major) index over shardAxes is c holds elements
/// [c * shardSize, (c + 1) * shardSize).
struct UnitDesc {
  std::string name;
  ShardStrategy strategy = ShardStrategy::FullShard;
  std::vector<int64_t> shardAxes;
  std::vector<int64_t> replicateAxes;
  uint64_t padded = 0;
  uint64_t shardSize = 0;
  DType paramDType = DType::F32;
  DType reduceDType = DType::F32;
  /// The type the unit's buffers are computed with (FSDP's buffer_dtype),
  /// if the unit sets one; buffers are stored in their own either way.
  std::optional<DType> bufferDType;
  std::vector<UnitMember> members;
  std::vector<UnitSlot> slots;

  /// Whether ranks hold shards of the unit's optimizer state (every
  /// strategy but no_shard).
  bool sharded() const { return strategy != ShardStrategy::NoShard; }
  /// Whether ranks hold shards of the unit's parameters (not no_shard or
  /// zero1, whose members are param arguments).
  bool paramsSharded() const {
    return sharded() && strategy != ShardStrategy::Zero1;
  }
  /// The slot called \p name, or NULL.
  const UnitSlot *findSlot(std::string_view name) const;
};

/// The forward-only eval entry of an artifact compiled with
/// zshard-compile --eval (the manifest's "eval"): a library of its own whose
/// entry takes the step's argument buffers, then one buffer for the loss,
/// and writes the loss of the batch without updating anything. Its
/// signature is that of the arguments and the loss alone.
struct EvalDesc {
  std::string library;
  std::string entry;
  std::string signature;
  /// Its static per-rank memory peak (bytes); -1 when not recorded.
  int64_t peakBytes = -1;
};

struct Manifest {
  std::string dir;  ///< The artifact directory.
  std::string path; ///< Its manifest.json.
  std::string library;
  std::string entry;
  std::string signature;
  int64_t ranks = 1;
  /// The device the step was compiled for ("target"): "cpu", "cuda", or ""
  /// when the manifest does not say; and a CUDA step's SM architecture.
  std::string target;
  std::string chip;
  /// Free-form string attributes of the module, e.g. zshard.model = gpt.
  std::vector<std::pair<std::string, std::string>> module;
  std::vector<ArgumentDesc> arguments; ///< By index.
  std::vector<ResultDesc> results;     ///< By index.
  /// The device grid; absent for a single-rank artifact ("grid": null).
  std::optional<GridDesc> grid;
  std::vector<UnitDesc> units; ///< In manifest order.
  /// The eval entry, when the artifact has one.
  std::optional<EvalDesc> eval;

  /// The step library's path: library relative to dir unless absolute.
  std::string libraryPath() const;
  /// The argument of \p role called \p name, or NULL.
  const ArgumentDesc *findArgument(ArgRole role, std::string_view name) const;
  /// The module attribute \p key, or NULL.
  const std::string *findModuleAttr(std::string_view key) const;
  /// The loss result.
  const ResultDesc &loss() const;
  /// The unit called \p name, or NULL.
  const UnitDesc *findUnit(std::string_view name) const;
  /// The parameters of the model as an unsharded run has them: every param
  /// argument and every member of a unit with sharded parameters, as (name,
  /// shape).
  std::vector<std::pair<const std::string *, const std::vector<int64_t> *>>
  modelParams() const;
  /// Whether the artifact is sharded: it has a grid, and its step calls the
  /// collectives of a grid of that shape.
  bool sharded() const { return grid.has_value(); }
};

/// The index of the shard of \p unit that the rank at grid coordinates
/// \p coords holds: its row-major index over the unit's shard axes (0 for a
/// unit without shard axes).
uint64_t shardIndex(const UnitDesc &unit, const GridDesc &grid,
                    const std::vector<int64_t> &coords);

/// The row-major coordinates of \p rank on \p shape (the last axis fastest).
std::vector<int64_t> gridCoords(int64_t rank,
                                const std::vector<int64_t> &shape);

/// Reads and checks ARTIFACT/manifest.json (\p artifactDir is the directory).
Manifest loadManifest(const std::string &artifactDir);

/// Checks the manifest text \p text of file \p path in artifact \p dir.
Manifest parseManifest(std::string_view text, const std::string &path,
                       const std::string &dir);

/// The canonical string the signature hashes: for each argument in index
/// order "role:name:dtype:d0xd1...;" (a scalar has an empty dims field, the
/// loss an empty name), then "->", then each result the same way.
std::string signatureText(const Manifest &manifest);

/// FNV-1a 64 of signatureText() as 16 lower-case hex digits.
std::string computeSignature(const Manifest &manifest);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_MANIFEST_H
