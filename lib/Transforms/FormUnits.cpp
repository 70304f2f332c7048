//===- FormUnits.cpp - --zshard-form-units --------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Wrap policies: decides which parameters form each unit and declares the
/// grid and the units, laid out by the shared UnitLayout helper.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Transforms/Passes.h"
#include "zshard/abi/UnitLayout.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <set>

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_FORMUNITS
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

constexpr StringLiteral kRootUnit = "root";
constexpr StringLiteral kGrid = "world";

/// A module path pattern such as `h.<i>`, split at dots.
using PathPattern = SmallVector<StringRef>;

/// The prefix of `name` that `pattern` matches, if the name continues
/// past it (a parameter lives inside the module, not at its path).
std::optional<std::string> matchPrefix(StringRef name,
                                       const PathPattern &pattern) {
  return matchPathPattern(name, pattern, /*proper=*/true);
}

struct FormUnitsPass : public mlir::zshard::impl::FormUnitsBase<FormUnitsPass> {
  using FormUnitsBase::FormUnitsBase;
  void runOnOperation() override;

  /// Unit name -> member argument indices, in the order units are declared.
  using Grouping = llvm::MapVector<std::string, SmallVector<unsigned>,
                                   std::map<std::string, unsigned>>;
  LogicalResult groupByPattern(func::FuncOp step, StringRef patternList,
                               ArrayRef<const StepArgument *> params,
                               Grouping &units);
  /// The patterns of the modules of the `layer-classes` classes.
  FailureOr<std::string> getClassPatterns(const StepContract &contract);
  LogicalResult groupBySize(ArrayRef<const StepArgument *> params,
                            Grouping &units);
  LogicalResult groupExplicitly(ArrayRef<const StepArgument *> params,
                                Grouping &units);
};

} // namespace

FailureOr<std::string>
FormUnitsPass::getClassPatterns(const StepContract &contract) {
  const ModuleClasses &classes = contract.getModuleClasses();
  if (classes.empty())
    return emitError(getReportLoc(getOperation()))
           << "zshard-form-units: layer-classes needs the module classes "
              "the frontend records (zshard.module_classes), and the step "
              "has none; give module path patterns instead";
  SmallVector<std::string> names;
  for (StringRef text : layerClasses) {
    if (!classes.hasClass(text.trim()))
      return emitError(getReportLoc(getOperation()))
             << "zshard-form-units: no module of the step has class '"
             << text.trim() << "'; its classes are "
             << llvm::join(classes.getClassNames(), ", ");
    names.push_back(text.trim().str());
  }
  return llvm::join(classes.getPatterns(names), ",");
}

LogicalResult FormUnitsPass::groupByPattern(
    func::FuncOp step, StringRef patternList,
    ArrayRef<const StepArgument *> params, Grouping &units) {
  SmallVector<PathPattern> patterns;
  SmallVector<StringRef> texts;
  patternList.split(texts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef text : texts) {
    std::optional<PathPattern> parts = parsePathPattern(text);
    if (!parts)
      return emitError(getReportLoc(getOperation()))
             << "zshard-form-units: bad module path pattern '" << text.trim()
             << "' (dotted names, indices and <i>, such as h.<i>)";
    patterns.push_back(std::move(*parts));
  }
  if (patterns.empty())
    return emitError(getReportLoc(getOperation()))
           << "zshard-form-units: the transformer policy needs a pattern";
  bool matched = false;
  for (const StepArgument *param : params) {
    std::optional<std::string> unit;
    for (const PathPattern &p : patterns)
      if ((unit = matchPrefix(param->name, p)))
        break;
    matched |= unit.has_value();
    units[unit.value_or(kRootUnit.str())].push_back(param->index);
  }
  if (!matched && !params.empty())
    return emitError(getReportLoc(getOperation()))
           << "zshard-form-units: pattern '" << patternList
           << "' matches no parameter; every parameter would land in @root ("
           << describeBlockPatterns(step) << "; or use policy=size)";
  return success();
}

LogicalResult FormUnitsPass::groupBySize(ArrayRef<const StepArgument *> params,
                                         Grouping &units) {
  if (minParams <= 0)
    return emitError(getReportLoc(getOperation()))
           << "zshard-form-units: min-params must be positive, got "
           << static_cast<int64_t>(minParams);
  int64_t held = 0;
  unsigned next = 0;
  for (const StepArgument *param : params) {
    units["unit" + std::to_string(next)].push_back(param->index);
    held += param->type.getNumElements();
    if (held >= minParams) {
      held = 0;
      ++next;
    }
  }
  return success();
}

LogicalResult
FormUnitsPass::groupExplicitly(ArrayRef<const StepArgument *> params,
                               Grouping &units) {
  llvm::StringMap<unsigned> byName;
  for (const StepArgument *param : params)
    byName[param->name] = param->index;
  llvm::StringMap<std::string> owner;
  SmallVector<StringRef> groups;
  StringRef(explicitUnits).split(groups, ';', -1, /*KeepEmpty=*/false);
  if (groups.empty())
    return emitError(getReportLoc(getOperation()))
           << "zshard-form-units: the explicit policy needs "
              "units=\"name=param,param;...\"";
  for (StringRef group : groups) {
    auto [unitName, members] = group.split('=');
    unitName = unitName.trim();
    if (unitName.empty() || members.trim().empty())
      return emitError(getReportLoc(getOperation()))
             << "zshard-form-units: '" << group
             << "' is not of the form name=param,param";
    if (units.count(unitName.str()))
      return emitError(getReportLoc(getOperation()))
             << "zshard-form-units: unit '" << unitName << "' is listed twice";
    SmallVector<unsigned> &indices = units[unitName.str()];
    SmallVector<StringRef> names;
    members.split(names, ',', -1, /*KeepEmpty=*/false);
    for (StringRef raw : names) {
      StringRef name = raw.trim();
      auto it = byName.find(name);
      if (it == byName.end())
        return emitError(getReportLoc(getOperation()))
               << "zshard-form-units: unit '" << unitName
               << "' names unknown parameter '" << name << "'";
      auto [prev, inserted] = owner.try_emplace(name, unitName.str());
      if (!inserted)
        return emitError(getReportLoc(getOperation()))
               << "zshard-form-units: parameter '" << name
               << "' is listed in units '" << prev->second << "' and '"
               << unitName << "'; a parameter lives in one unit";
      indices.push_back(it->second);
    }
  }
  for (const StepArgument *param : params)
    if (!owner.count(param->name))
      units[kRootUnit.str()].push_back(param->index);
  return success();
}

void FormUnitsPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fail = [&](const Twine &message) {
    emitError(getReportLoc(module)) << "zshard-form-units: " << message;
    signalPassFailure();
  };
  StepContract contract(module);
  if (failed(contract.run()))
    return signalPassFailure();
  if (!module.getOps<UnitOp>().empty())
    return fail("the module already has units; form them once");
  if (SymbolTable::lookupSymbolIn(module, kGrid))
    return fail("the symbol @world is taken");

  Strategy parsed = strategy;
  bool hybrid =
      parsed == Strategy::HybridShard || parsed == Strategy::HybridShardZero2;
  std::set<std::string> keepGathered;
  if (!noReshard.empty()) {
    if (parsed != Strategy::FullShard && parsed != Strategy::HybridShard)
      return fail("no-reshard applies to full_shard and hybrid_shard, not " +
                  stringifyStrategy(parsed));
    for (StringRef n : noReshard)
      keepGathered.insert(n.trim().str());
  }
  if (ranks < 1)
    return fail("ranks must be at least 1, got " + Twine(ranks));
  if (replicas < 1 || ranks % replicas != 0)
    return fail("replicas (" + Twine(replicas) + ") must divide ranks (" +
                Twine(ranks) + ")");
  if (!hybrid && replicas != 1)
    return fail("replicas applies only to the hybrid strategies");
  Builder builder(&getContext());
  Type reduce = getUnitFloatType(&getContext(), reduceType);
  Type buffer = getUnitFloatType(&getContext(), bufferType);

  SmallVector<const StepArgument *> params =
      contract.getArguments(ArgRole::Param);
  std::string patternList = pattern;
  if (!layerClasses.empty()) {
    if (policy != WrapPolicy::Transformer)
      return fail(Twine("layer-classes applies to the transformer policy, "
                        "not ") +
                  (policy == WrapPolicy::Size ? "size" : "explicit"));
    FailureOr<std::string> found = getClassPatterns(contract);
    if (failed(found))
      return signalPassFailure();
    patternList = *found;
  }
  Grouping units;
  LogicalResult grouped =
      policy == WrapPolicy::Transformer
          ? groupByPattern(contract.getStep(), patternList, params, units)
      : policy == WrapPolicy::Size ? groupBySize(params, units)
                                   : groupExplicitly(params, units);
  if (failed(grouped))
    return signalPassFailure();

  int64_t groupSize = ranks / replicas;
  OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
  Location loc = getReportLoc(module);
  SmallVector<int64_t> gridShape =
      hybrid ? SmallVector<int64_t>{replicas, groupSize}
             : SmallVector<int64_t>{ranks};
  shard::GridOp::create(top, loc, kGrid, gridShape);
  SmallVector<int64_t> shardAxes = {hybrid ? 1 : 0};
  SmallVector<int64_t> replicateAxes;
  if (hybrid)
    replicateAxes.push_back(0);

  func::FuncOp step = contract.getStep();
  for (auto &[name, indices] : units) {
    std::vector<::zshard_abi::MemberSpec> specs;
    Type paramType;
    for (unsigned index : indices) {
      const StepArgument &arg = contract.getArguments()[index];
      specs.push_back(
          {arg.name, std::vector<int64_t>(arg.type.getShape().begin(),
                                          arg.type.getShape().end())});
      Type element = arg.type.getElementType();
      if (paramType && paramType != element) {
        InFlightDiagnostic diag = emitError(getReportLoc(module))
                                  << "zshard-form-units: unit '" << name
                                  << "' would mix element types " << paramType
                                  << " and " << element;
        return signalPassFailure();
      }
      paramType = element;
    }
    std::string error;
    std::optional<::zshard_abi::UnitLayout> layout =
        ::zshard_abi::UnitLayout::create(specs, groupSize, 1, &error);
    if (!layout)
      return fail("unit '" + name + "': " + error);
    SmallVector<Attribute> members;
    for (const ::zshard_abi::MemberLayout &member : layout->getMembers())
      members.push_back(MemberAttr::get(&getContext(), member.name,
                                        member.shape, member.offset));
    // Per-unit reshard-after-forward.
    Strategy unitStrategy = parsed;
    if (keepGathered.erase(name)) {
      if (unitStrategy == Strategy::FullShard)
        unitStrategy = Strategy::ShardGradOp;
      else if (unitStrategy == Strategy::HybridShard)
        unitStrategy = Strategy::HybridShardZero2;
    }
    auto unit = UnitOp::create(top, loc, builder.getStringAttr(name),
                               FlatSymbolRefAttr::get(&getContext(), kGrid),
                               builder.getDenseI64ArrayAttr(shardAxes),
                               builder.getDenseI64ArrayAttr(replicateAxes),
                               StrategyAttr::get(&getContext(), unitStrategy),
                               layout->getPaddedSize(),
                               TypeAttr::get(paramType), TypeAttr::get(reduce),
                               buffer ? TypeAttr::get(buffer) : TypeAttr(),
                               builder.getArrayAttr(members));
    auto ref = FlatSymbolRefAttr::get(unit.getSymNameAttr());
    for (unsigned index : indices)
      step.setArgAttr(index, contract::kUnit, ref);
    ++numUnits;
  }
  if (!keepGathered.empty())
    return fail("no-reshard names '" + *keepGathered.begin() +
                "', which is not a unit");
}
