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
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "zshard/Analysis/ModuleClasses.h"
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"
#include "zshard/Dialect/ZShard/IR/ZShardContract.h"
#include "zshard/Support/DottedPath.h"
#include "zshard/abi/InitSpec.h"
#include "zshard/abi/Roles.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir {
namespace zshard {

/// Roles of arguments and results (zshard/abi/Roles.h, the one definition
/// the runtime shares).
using ArgRole = ::zshard_abi::ArgRole;
using ResultRole = ::zshard_abi::ResultRole;
using ::zshard_abi::kAllArgRoles;

/// Where the runtime keeps an argument: device memory (the default) or the
/// host pool (optimizer state offloaded by zshard-offload).
using Placement = ArgPlacement;

StringRef stringifyArgRole(ArgRole role);
StringRef stringifyResultRole(ResultRole role);

// The contract attributes of one argument or result, for passes that work
// on a function StepContract does not read (a bufferized step, a helper):
// the one reader of `zshard.role` and `zshard.placement` besides
// StepContract.

/// The role of argument `index` of `func`, if it has one.
std::optional<ArgRole> readArgRole(FunctionOpInterface func, unsigned index);
/// The role of result `index` of `func`, if it has one.
std::optional<ResultRole> readResultRole(FunctionOpInterface func,
                                         unsigned index);
/// The result role of argument `index` of a bufferized `func`: an output
/// argument that carries the role of the result it replaced.
std::optional<ResultRole> readOutParamRole(FunctionOpInterface func,
                                           unsigned index);
/// Where the runtime keeps argument `index` of `func` (device by default).
Placement readPlacement(FunctionOpInterface func, unsigned index);

/// An init spec: `normal(MEAN, STD)`, `uniform(LOW, HIGH)`, `zeros`, `ones`,
/// or `param` (a copy of the parameter, for optimizer state such as an f32
/// master copy of a bf16 parameter). The grammar is the runtime's
/// (zshard/abi/InitSpec.h).
using InitSpec = ::zshard_abi::InitSpec;

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
