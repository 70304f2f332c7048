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
/// loadManifest() checks everything it can without loading the library and
/// throws a Failure "<manifest path>: <problem>" for the first problem.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_MANIFEST_H
#define ZSHARD_RUNTIME_LIB_STEP_MANIFEST_H

#include "core/DType.h"
#include "core/InitSpec.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zshard::rt {

/// The format and version this runtime reads.
constexpr const char *artifactFormat = "zshard-artifact";
constexpr int64_t artifactVersion = 1;

enum class ArgRole { Param, OptState, Batch, Hyper };
enum class ResultRole { Loss, ParamOut, OptStateOut };

/// "param", "opt_state", "batch", "hyper".
const char *roleName(ArgRole role);
/// "loss", "param_out", "opt_state_out".
const char *roleName(ResultRole role);

/// Element type and shape of a dense row-major buffer.
struct TensorType {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t elements = 1;
  uint64_t bytes = 0;
};

struct ArgumentDesc {
  int64_t index = 0;
  ArgRole role = ArgRole::Param;
  std::string name;
  TensorType type;
  std::string initText; ///< param and opt_state only.
  InitSpec init;        ///< parsed initText.
  std::string param;    ///< opt_state only: the parameter it belongs to.
};

struct ResultDesc {
  int64_t index = 0;
  ResultRole role = ResultRole::Loss;
  std::string name; ///< "" for the loss.
  TensorType type;
  int64_t argument = -1; ///< param_out/opt_state_out: the argument updated.
};

struct Manifest {
  std::string dir;  ///< The artifact directory.
  std::string path; ///< Its manifest.json.
  std::string library;
  std::string entry;
  std::string signature;
  int64_t ranks = 1;
  /// Free-form string attributes of the module, e.g. zshard.model = gpt.
  std::vector<std::pair<std::string, std::string>> module;
  std::vector<ArgumentDesc> arguments; ///< By index.
  std::vector<ResultDesc> results;     ///< By index.
  size_t numUnits = 0;

  /// The step library's path: library relative to dir unless absolute.
  std::string libraryPath() const;
  /// The argument of \p role called \p name, or NULL.
  const ArgumentDesc *findArgument(ArgRole role, std::string_view name) const;
  /// The module attribute \p key, or NULL.
  const std::string *findModuleAttr(std::string_view key) const;
  /// The loss result.
  const ResultDesc &loss() const;
};

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
