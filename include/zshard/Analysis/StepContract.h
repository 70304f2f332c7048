//===- StepContract.h - the signature of a training step --------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reads the training-step contract of docs/contract.md off a module: which
/// function is the step, and the role, name, init spec and type of each of
/// its arguments and results. Passes that shard, plan memory or emit the
/// artifact manifest query this analysis instead of the raw attributes.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_STEPCONTRACT_H
#define ZSHARD_ANALYSIS_STEPCONTRACT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "zshard/Analysis/ModuleClasses.h"
#include "zshard/abi/InitSpec.h"
#include "zshard/abi/Roles.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir {
namespace zshard {

/// Attribute names of the contract.
namespace contract {
inline constexpr llvm::StringLiteral kStep = "zshard.step";
inline constexpr llvm::StringLiteral kRole = "zshard.role";
inline constexpr llvm::StringLiteral kName = "zshard.name";
inline constexpr llvm::StringLiteral kInit = "zshard.init";
inline constexpr llvm::StringLiteral kParam = "zshard.param";
inline constexpr llvm::StringLiteral kPhase = "zshard.phase";
inline constexpr llvm::StringLiteral kUnit = "zshard.unit";
inline constexpr llvm::StringLiteral kSlot = "zshard.slot";
inline constexpr llvm::StringLiteral kInits = "zshard.inits";
inline constexpr llvm::StringLiteral kPlacement = "zshard.placement";
inline constexpr llvm::StringLiteral kInPlace = "zshard.in_place";
/// On a `buffer` argument: whether the buffer is in the model's state_dict
/// (checkpointed) or derived (torch's `persistent=False`).
inline constexpr llvm::StringLiteral kPersistent = "zshard.persistent";
/// A hyper's recorded value; the manifest carries it as the hyper's
/// `default` (zshard/abi/ManifestSchema.h).
inline constexpr llvm::StringLiteral kDefault = "zshard.default";
/// On the step: module path -> class name (zshard/Analysis/ModuleClasses.h).
inline constexpr llvm::StringLiteral kModuleClasses = "zshard.module_classes";
/// Marks a step as the forward-only eval entry zshard-extract-eval derived
/// from a training step: its only result is the loss, and it updates nothing.
inline constexpr llvm::StringLiteral kEval = "zshard.eval";
/// On the module: the step's ABI record (#zshard.step_abi, written by
/// zshard-record-abi), which the artifact's manifest is written from.
inline constexpr llvm::StringLiteral kABI = "zshard.abi";
} // namespace contract

/// Roles of arguments and results (zshard/abi/Roles.h, the one definition
/// the runtime shares).
using ArgRole = ::zshard_abi::ArgRole;
using ResultRole = ::zshard_abi::ResultRole;
using ::zshard_abi::kAllArgRoles;

/// Where the runtime keeps an argument: device memory (the default) or the
/// host pool (optimizer state offloaded by zshard-offload).
enum class Placement { Device, Host };

StringRef stringifyArgRole(ArgRole role);
StringRef stringifyResultRole(ResultRole role);
/// The role spelt `text` (stringifyArgRole's inverse), if any.
std::optional<ArgRole> symbolizeArgRole(StringRef text);

/// An init spec: `normal(MEAN, STD)`, `uniform(LOW, HIGH)`, `zeros`, `ones`,
/// or `param` (a copy of the parameter, for optimizer state such as an f32
/// master copy of a bf16 parameter). The grammar is the runtime's
/// (zshard/abi/InitSpec.h).
using InitSpec = ::zshard_abi::InitSpec;

/// True for a dotted path `[A-Za-z_][A-Za-z0-9_]*` or decimal indices joined
/// by `.`; the empty path is accepted only if `allowEmpty`.
bool isValidDottedPath(StringRef path, bool allowEmpty = false);

struct StepArgument {
  unsigned index = 0;
  ArgRole role = ArgRole::Param;
  std::string name;
  /// For optimizer state: the parameter it belongs to.
  std::string param;
  std::optional<InitSpec> init;
  /// For shards: the unit, the optimizer-state slot, and the init spec of
  /// each member of the unit, in member order.
  std::string unit;
  std::string slot;
  SmallVector<InitSpec> memberInits;
  RankedTensorType type;
  Placement placement = Placement::Device;
  /// For buffers: whether it is checkpointed (contract::kPersistent).
  bool persistent = false;
};

struct StepResult {
  unsigned index = 0;
  ResultRole role = ResultRole::Loss;
  std::string name;
  RankedTensorType type;
};

/// The step function of a module and its signature.
class StepContract {
public:
  explicit StepContract(Operation *module);

  /// Finds the step and reads its signature. With `emitDiagnostics`, reports
  /// every broken signature rule of docs/contract.md; fails if any.
  LogicalResult run(bool emitDiagnostics = true);

  func::FuncOp getStep() const { return step; }
  ArrayRef<StepArgument> getArguments() const { return arguments; }
  ArrayRef<StepResult> getResults() const { return results; }
  /// The arguments of one role, in argument order.
  SmallVector<const StepArgument *> getArguments(ArgRole role) const;
  /// The parameter argument named `name`, or null.
  const StepArgument *lookupParam(StringRef name) const;
  /// The buffer argument named `name`, or null.
  const StepArgument *lookupBuffer(StringRef name) const;
  /// Index of the loss result, if the step has one.
  std::optional<unsigned> getLossIndex() const { return lossIndex; }
  /// The module classes the frontend recorded (empty when it recorded none).
  const ModuleClasses &getModuleClasses() const { return moduleClasses; }
  /// Whether the step is a forward-only eval step (contract::kEval).
  bool isEval() const { return step && step->hasAttr(contract::kEval); }

private:
  LogicalResult readArguments(bool emit);
  LogicalResult readResults(bool emit);
  LogicalResult readShard(StepArgument &info, DictionaryAttr attrs,
                          StringRef label, bool emit);

  Operation *module;
  func::FuncOp step;
  SmallVector<StepArgument> arguments;
  SmallVector<StepResult> results;
  llvm::StringMap<unsigned> paramIndex;
  std::optional<unsigned> lossIndex;
  ModuleClasses moduleClasses;
};

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_ANALYSIS_STEPCONTRACT_H
