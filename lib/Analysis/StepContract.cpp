//===- StepContract.cpp - the signature of a training step ----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/StepContract.h"
#include "zshard/Analysis/ModulePaths.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zshard;

StringRef zshard::stringifyArgRole(ArgRole role) {
  return ::zshard_abi::roleName(role);
}

StringRef zshard::stringifyResultRole(ResultRole role) {
  return ::zshard_abi::roleName(role);
}

std::optional<ArgRole> zshard::readArgRole(FunctionOpInterface func,
                                           unsigned index) {
  if (auto role = func.getArgAttrOfType<RoleAttr>(index, contract::kRole))
    return toAbiArgRole(role.getValue());
  return std::nullopt;
}

std::optional<ResultRole> zshard::readResultRole(FunctionOpInterface func,
                                                 unsigned index) {
  if (auto role = func.getResultAttrOfType<RoleAttr>(index, contract::kRole))
    return toAbiResultRole(role.getValue());
  return std::nullopt;
}

std::optional<ResultRole> zshard::readOutParamRole(FunctionOpInterface func,
                                                   unsigned index) {
  if (auto role = func.getArgAttrOfType<RoleAttr>(index, contract::kRole))
    return toAbiResultRole(role.getValue());
  return std::nullopt;
}

Placement zshard::readPlacement(FunctionOpInterface func, unsigned index) {
  if (auto placement =
          func.getArgAttrOfType<ArgPlacementAttr>(index, contract::kPlacement))
    return placement.getValue();
  return Placement::Device;
}

//===----------------------------------------------------------------------===//
// StepContract
//===----------------------------------------------------------------------===//

StepContract::StepContract(Operation *module) : module(module) {}

SmallVector<const StepArgument *>
StepContract::getArguments(ArgRole role) const {
  SmallVector<const StepArgument *> selected;
  for (const StepArgument &argument : arguments)
    if (argument.role == role)
      selected.push_back(&argument);
  return selected;
}

const StepArgument *StepContract::lookupParam(StringRef name) const {
  auto it = paramIndex.find(name);
  return it == paramIndex.end() ? nullptr : &arguments[it->second];
}

const StepArgument *StepContract::lookupBuffer(StringRef name) const {
  for (const StepArgument &argument : arguments)
    if (argument.role == ArgRole::Buffer && argument.name == name)
      return &argument;
  return nullptr;
}

static std::string describeShape(RankedTensorType type) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(type.getShape(), os);
  os << "]";
  return text;
}

LogicalResult StepContract::run(bool emit) {
  step = nullptr;
  arguments.clear();
  results.clear();
  paramIndex.clear();
  lossIndex.reset();
  moduleClasses = ModuleClasses();

  bool ok = true;
  module->walk([&](func::FuncOp func) {
    if (!func->hasAttr(contract::kStep))
      return;
    if (step) {
      if (emit)
        func.emitError("second function marked zshard.step; a module holds "
                       "exactly one step")
                .attachNote(step.getLoc())
            << "first step here";
      ok = false;
      return;
    }
    step = func;
  });
  if (!step) {
    if (emit)
      module->emitError("no func.func is marked zshard.step");
    return failure();
  }
  if (step.isExternal()) {
    if (emit)
      step.emitError("the step has no body");
    return failure();
  }
  bool argsOk = succeeded(readArguments(emit));
  bool resultsOk = succeeded(readResults(emit));
  std::string classes =
      moduleClasses.read(step->getAttr(contract::kModuleClasses));
  if (!classes.empty()) {
    if (emit)
      step.emitError() << contract::kModuleClasses << ": " << classes;
    ok = false;
  }
  return success(ok && argsOk && resultsOk);
}

/// The string attribute `name` of argument or result attributes, if any.
static std::optional<StringRef> getString(DictionaryAttr attrs,
                                          StringRef name) {
  if (!attrs)
    return std::nullopt;
  if (auto value = dyn_cast_or_null<StringAttr>(attrs.get(name)))
    return value.getValue();
  return std::nullopt;
}

LogicalResult StepContract::readArguments(bool emit) {
  bool ok = true;
  auto error = [&](const Twine &message) {
    ok = false;
    if (emit)
      step.emitError(message);
  };
  llvm::StringMap<unsigned> nameIndex;
  for (auto [index, argument] : llvm::enumerate(step.getArguments())) {
    std::string label = llvm::formatv("argument #{0}", index).str();
    DictionaryAttr attrs = step.getArgAttrDict(index);
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!type || !type.hasStaticShape()) {
      error(label + " must be a statically shaped ranked tensor, got '" +
            llvm::formatv("{0}", argument.getType()).str() + "'");
      continue;
    }
    auto roleAttr = attrs
                        ? dyn_cast_or_null<RoleAttr>(attrs.get(contract::kRole))
                        : RoleAttr();
    if (!roleAttr) {
      error(label + " has no zshard.role");
      continue;
    }
    StepArgument info;
    info.index = index;
    info.type = type;
    StringRef role = stringifyRole(roleAttr.getValue());
    if (std::optional<ArgRole> known = toAbiArgRole(roleAttr.getValue())) {
      info.role = *known;
    } else {
      error(label + " has the result role '" + role +
            "'; expected param, opt_state, buffer, batch or hyper");
      continue;
    }
    std::optional<StringRef> name = getString(attrs, contract::kName);
    if (!name) {
      error(label + " (" + role + ") needs a zshard.name");
      continue;
    }
    info.name = name->str();
    label += " ('" + info.name + "')";
    if (!isValidDottedPath(*name)) {
      error(label + ": '" + *name + "' is not a dotted path");
      continue;
    }
    auto [it, inserted] = nameIndex.try_emplace(*name, index);
    if (!inserted) {
      error(llvm::formatv("name '{0}' is used by arguments #{1} and #{2}",
                          *name, it->second, index)
                .str());
      continue;
    }
    if (auto placement = attrs ? dyn_cast_or_null<ArgPlacementAttr>(
                                     attrs.get(contract::kPlacement))
                               : ArgPlacementAttr()) {
      bool optState =
          info.role == ArgRole::OptState || info.role == ArgRole::OptStateShard;
      if (placement.getValue() == Placement::Host && optState)
        info.placement = Placement::Host;
      else if (placement.getValue() == Placement::Host)
        error(label + ": only optimizer state can be placed in host memory "
                      "(zshard.placement = #zshard.placement<host>)");
    }

    if (info.role == ArgRole::ParamShard ||
        info.role == ArgRole::OptStateShard) {
      if (failed(readShard(info, attrs, label, emit)))
        ok = false;
      arguments.push_back(std::move(info));
      continue;
    }
    if (Attribute persistent =
            attrs ? attrs.get(contract::kPersistent) : nullptr) {
      auto flag = dyn_cast<BoolAttr>(persistent);
      if (info.role != ArgRole::Buffer)
        error(label + ": zshard.persistent is for buffer arguments only");
      else if (!flag)
        error(label + ": zshard.persistent must be true or false, got " +
              llvm::formatv("{0}", persistent).str());
      else
        info.persistent = flag.getValue();
    } else if (info.role == ArgRole::Buffer) {
      error(label + " (buffer) needs zshard.persistent = true or false "
                    "(whether checkpoints hold it)");
    }
    if (info.role == ArgRole::Param || info.role == ArgRole::OptState ||
        info.role == ArgRole::Buffer) {
      if (!isa<FloatType>(type.getElementType()))
        error(label + " must have a floating-point element type");
      auto init = dyn_cast_or_null<InitAttr>(attrs.get(contract::kInit));
      if (!init) {
        error(label + " needs a zshard.init");
      } else {
        info.init = init.getSpec();
        if (info.init->kind == InitSpec::Kind::Param &&
            info.role != ArgRole::OptState)
          error(label + ": init 'param' copies the parameter an optimizer "
                        "state belongs to; a " +
                (info.role == ArgRole::Param ? "parameter" : "buffer") +
                " cannot use it");
      }
    }
    if (info.role == ArgRole::OptState) {
      std::optional<StringRef> param = getString(attrs, contract::kParam);
      if (!param)
        error(label + " needs a zshard.param naming its parameter");
      else
        info.param = param->str();
    }
    if (info.role == ArgRole::Hyper &&
        (type.getRank() != 0 || !isa<FloatType>(type.getElementType())))
      error(label + " must be a rank-0 floating-point tensor, got '" +
            llvm::formatv("{0}", type).str() + "'");
    // The value a producer recorded for a hyper (the optimizer's lr); the
    // artifact's manifest carries it as the hyper's "default".
    if (Attribute value = attrs ? attrs.get(contract::kDefault) : nullptr) {
      auto number = dyn_cast<FloatAttr>(value);
      if (info.role != ArgRole::Hyper)
        error(label + ": zshard.default is for hyper arguments only");
      else if (!number || !std::isfinite(number.getValueAsDouble()))
        error(label +
              ": zshard.default must be a finite float (e.g. 3.0e-04 "
              ": f64), got " +
              llvm::formatv("{0}", value).str());
    }
    if (info.role == ArgRole::Param)
      paramIndex[info.name] = arguments.size();
    arguments.push_back(std::move(info));
  }

  // Optimizer state belongs to an existing parameter of the same shape.
  for (const StepArgument &state : arguments) {
    if (state.role != ArgRole::OptState || state.param.empty())
      continue;
    const StepArgument *param = lookupParam(state.param);
    if (!param) {
      error(llvm::formatv("argument #{0} ('{1}') belongs to unknown parameter "
                          "'{2}'",
                          state.index, state.name, state.param)
                .str());
      continue;
    }
    if (param->type.getShape() != state.type.getShape())
      error(llvm::formatv("argument #{0} ('{1}') has shape {2} but its "
                          "parameter '{3}' has shape {4}",
                          state.index, state.name, describeShape(state.type),
                          param->name, describeShape(param->type))
                .str());
  }
  return success(ok);
}

LogicalResult StepContract::readShard(StepArgument &info, DictionaryAttr attrs,
                                      StringRef label, bool emit) {
  auto error = [&](const Twine &message) {
    if (emit)
      step.emitError(message);
    return failure();
  };
  auto unit =
      attrs ? dyn_cast_or_null<FlatSymbolRefAttr>(attrs.get(contract::kUnit))
            : FlatSymbolRefAttr();
  if (!unit)
    return error(label + " needs a zshard.unit naming its unit");
  info.unit = unit.getValue().str();
  if (info.role == ArgRole::OptStateShard) {
    std::optional<StringRef> slot = getString(attrs, contract::kSlot);
    if (!slot)
      return error(label + " needs a zshard.slot");
    info.slot = slot->str();
  }
  auto inits = dyn_cast_or_null<ArrayAttr>(attrs.get(contract::kInits));
  if (!inits)
    return error(label + " needs zshard.inits, one init spec per member");
  for (Attribute attr : inits) {
    auto spec = dyn_cast<InitAttr>(attr);
    if (!spec)
      return error(label + " has a member init that is no #zshard.init");
    info.memberInits.push_back(spec.getSpec());
  }
  return success();
}

/// The error for a result that would update a buffer.
static std::string buffersAreNotResults(StringRef label, StringRef name) {
  return llvm::formatv("{0} updates buffer '{1}'; a buffer is never updated "
                       "(it is no result of the step)",
                       label, name)
      .str();
}

LogicalResult StepContract::readResults(bool emit) {
  bool ok = true;
  auto error = [&](const Twine &message) {
    ok = false;
    if (emit)
      step.emitError(message);
  };
  // name -> result index, for param_out and opt_state_out separately.
  llvm::StringMap<unsigned> updated[2];
  ArrayRef<Type> types = step.getResultTypes();
  for (auto [index, rawType] : llvm::enumerate(types)) {
    std::string label = llvm::formatv("result #{0}", index).str();
    auto type = dyn_cast<RankedTensorType>(rawType);
    if (!type || !type.hasStaticShape()) {
      error(label + " must be a statically shaped ranked tensor, got '" +
            llvm::formatv("{0}", rawType).str() + "'");
      continue;
    }
    DictionaryAttr attrs = step.getResultAttrDict(index);
    auto roleAttr = attrs
                        ? dyn_cast_or_null<RoleAttr>(attrs.get(contract::kRole))
                        : RoleAttr();
    if (!roleAttr) {
      error(label + " has no zshard.role");
      continue;
    }
    StepResult info;
    info.index = index;
    info.type = type;
    StringRef role = stringifyRole(roleAttr.getValue());
    std::optional<ResultRole> known = toAbiResultRole(roleAttr.getValue());
    if (isEval() && known != ResultRole::Loss) {
      error(label + " (" + role +
            "): an eval step (zshard.eval) returns the loss alone");
      continue;
    }
    if (known == ResultRole::Loss) {
      info.role = ResultRole::Loss;
      if (lossIndex) {
        error(llvm::formatv("results #{0} and #{1} are both the loss; a step "
                            "has one",
                            *lossIndex, index)
                  .str());
        continue;
      }
      if (type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
        error(label + " (loss) must be a rank-0 floating-point tensor, got '" +
              llvm::formatv("{0}", type).str() + "'");
      lossIndex = index;
      results.push_back(info);
      continue;
    }
    ArgRole source;
    if (known == ResultRole::ParamOut) {
      source = ArgRole::Param;
    } else if (known == ResultRole::OptStateOut) {
      source = ArgRole::OptState;
    } else if (known == ResultRole::ParamShardOut) {
      source = ArgRole::ParamShard;
    } else if (known == ResultRole::OptStateShardOut) {
      source = ArgRole::OptStateShard;
    } else {
      // The dialect rejects an argument's role on a result before this.
      error(label + " has the argument role '" + role +
            "'; expected loss, param_out or opt_state_out");
      continue;
    }
    info.role = *known;
    std::optional<StringRef> name = getString(attrs, contract::kName);
    if (!name) {
      error(label + " (" + role + ") needs a zshard.name");
      continue;
    }
    info.name = name->str();
    const StepArgument *argument = nullptr;
    for (const StepArgument &candidate : arguments)
      if (candidate.role == source && candidate.name == info.name)
        argument = &candidate;
    if (!argument && lookupBuffer(info.name)) {
      error(buffersAreNotResults(label, info.name));
      continue;
    }
    if (!argument) {
      error(llvm::formatv("{0} updates unknown {1} '{2}'", label,
                          source == ArgRole::Param ? "parameter"
                                                   : "optimizer state",
                          info.name)
                .str());
      continue;
    }
    if (argument->type != type)
      error(llvm::formatv("{0} ('{1}') has type '{2}' but argument #{3} has "
                          "type '{4}'",
                          label, info.name, type, argument->index,
                          argument->type)
                .str());
    bool isParamLike =
        source == ArgRole::Param || source == ArgRole::ParamShard;
    auto [it, inserted] =
        updated[isParamLike ? 0 : 1].try_emplace(info.name, index);
    if (!inserted) {
      error(llvm::formatv("'{0}' is updated by results #{1} and #{2}",
                          info.name, it->second, index)
                .str());
      continue;
    }
    results.push_back(std::move(info));
  }

  if (!lossIndex)
    error("the step has no loss result");
  // An eval step reads the state and updates none of it.
  for (const StepArgument &argument :
       isEval() ? ArrayRef<StepArgument>() : ArrayRef(arguments)) {
    bool isParam =
        argument.role == ArgRole::Param || argument.role == ArgRole::ParamShard;
    bool isState = argument.role == ArgRole::OptState ||
                   argument.role == ArgRole::OptStateShard;
    if (!isParam && !isState)
      continue;
    if (!updated[isParam ? 0 : 1].count(argument.name))
      error(llvm::formatv("argument #{0} ('{1}') has no {2} result",
                          argument.index, argument.name,
                          argument.role == ArgRole::Param      ? "param_out"
                          : argument.role == ArgRole::OptState ? "opt_state_out"
                          : argument.role == ArgRole::ParamShard
                              ? "param_shard_out"
                              : "opt_state_shard_out")
                .str());
  }
  return success(ok);
}
