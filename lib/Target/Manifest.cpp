//===- Manifest.cpp - the artifact manifest -------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Target/Artifact.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/abi/Fnv1a.h"
#include "zshard/abi/ManifestSchema.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::zshard;
namespace key = ::zshard_abi::manifest;

::zshard_abi::Strategy zshard::toAbiStrategy(Strategy strategy) {
  using Abi = ::zshard_abi::Strategy;
  static_assert(int(Strategy::NoShard) == int(Abi::NoShard) &&
                    int(Strategy::Zero1) == int(Abi::Zero1) &&
                    int(Strategy::ShardGradOp) == int(Abi::ShardGradOp) &&
                    int(Strategy::FullShard) == int(Abi::FullShard) &&
                    int(Strategy::HybridShard) == int(Abi::HybridShard) &&
                    int(Strategy::HybridShardZero2) ==
                        int(Abi::HybridShardZero2),
                "the dialect's Strategy is the ABI's");
  return Abi(int(strategy));
}

std::string zshard::getDTypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width == 1)
      return "i1";
    if (width == 8 || width == 16 || width == 32 || width == 64)
      return (integer.isUnsigned() ? "u" : "i") + std::to_string(width);
  }
  return "";
}

static std::string describe(StringRef role, StringRef name,
                            RankedTensorType type) {
  std::string dims;
  llvm::raw_string_ostream os(dims);
  llvm::interleave(type.getShape(), os, "x");
  return (role + ":" + name + ":" + getDTypeName(type.getElementType()) + ":" +
          dims + ";")
      .str();
}

std::string zshard::getCanonicalSignature(const StepContract &contract,
                                          ArrayRef<bool> inPlace) {
  std::string text;
  for (const StepArgument &argument : contract.getArguments())
    text +=
        describe(stringifyArgRole(argument.role), argument.name, argument.type);
  text += "->";
  for (const StepResult &result : contract.getResults()) {
    bool updatedInPlace =
        result.index < inPlace.size() && inPlace[result.index];
    text += describe((stringifyResultRole(result.role) +
                      (updatedInPlace ? "(in_place)" : ""))
                         .str(),
                     result.name, result.type);
  }
  return text;
}

std::string zshard::getSignatureHash(const StepContract &contract,
                                     ArrayRef<bool> inPlace) {
  return ::zshard_abi::hex16(
      ::zshard_abi::fnv1a64(getCanonicalSignature(contract, inPlace)));
}

template <typename Range> static llvm::json::Array toArray(Range &&values) {
  llvm::json::Array array;
  for (auto value : values)
    array.push_back(value);
  return array;
}

/// A unit as the runtime needs it to build and save shards: layout, members
/// with their init specs, and the optimizer-state slots with theirs.
static llvm::json::Object describeUnit(UnitOp unit,
                                       const StepContract &contract) {
  const StepArgument *paramShard = nullptr;
  SmallVector<const StepArgument *> stateShards;
  for (const StepArgument &arg : contract.getArguments()) {
    if (arg.unit != unit.getSymName())
      continue;
    if (arg.role == ArgRole::ParamShard)
      paramShard = &arg;
    else if (arg.role == ArgRole::OptStateShard)
      stateShards.push_back(&arg);
  }
  llvm::json::Array members;
  unsigned i = 0;
  for (auto member : unit.getMembers().getAsRange<MemberAttr>()) {
    llvm::json::Object entry{{key::kName, member.getName()},
                             {key::kShape, toArray(member.getShape())},
                             {key::kOffset, member.getOffset()}};
    if (paramShard && i < paramShard->memberInits.size())
      entry[key::kInit] = paramShard->memberInits[i].str();
    else if (const StepArgument *param = contract.lookupParam(member.getName()))
      if (param->init)
        entry[key::kInit] = param->init->str();
    members.push_back(std::move(entry));
    ++i;
  }
  llvm::json::Array slots;
  for (const StepArgument *state : stateShards) {
    llvm::json::Array inits;
    for (const InitSpec &spec : state->memberInits)
      inits.push_back(spec.str());
    slots.push_back(llvm::json::Object{
        {key::kSlot, state->slot},
        {key::kDType, getDTypeName(state->type.getElementType())},
        {key::kInits, std::move(inits)}});
  }
  std::optional<int64_t> shardSize = unit.getShardSize();
  llvm::json::Object entry{
      {key::kName, unit.getSymName()},
      {key::kStrategy,
       ::zshard_abi::strategyName(toAbiStrategy(unit.getStrategy()))},
      {key::kShardAxes, toArray(unit.getShardAxes())},
      {key::kReplicateAxes, toArray(unit.getReplicateAxes())},
      {key::kPadded, unit.getPaddedSize()},
      {key::kShardSize, shardSize ? *shardSize : int64_t(-1)},
      {key::kParamDType, getDTypeName(unit.getParamType())},
      {key::kReduceDType, getDTypeName(unit.getReduceType())},
      {key::kMembers, std::move(members)},
      {key::kSlots, std::move(slots)}};
  if (std::optional<Type> buffer = unit.getBufferType())
    entry[key::kBufferDType] = getDTypeName(*buffer);
  return entry;
}

static llvm::json::Array shapeOf(RankedTensorType type) {
  llvm::json::Array shape;
  for (int64_t dim : type.getShape())
    shape.push_back(dim);
  return shape;
}

llvm::json::Object zshard::buildManifest(const StepContract &contract,
                                         ModuleOp module) {
  llvm::json::Array arguments;
  for (const StepArgument &argument : contract.getArguments()) {
    llvm::json::Object entry{
        {key::kIndex, argument.index},
        {key::kRole, stringifyArgRole(argument.role)},
        {key::kName, argument.name},
        {key::kDType, getDTypeName(argument.type.getElementType())},
        {key::kShape, shapeOf(argument.type)}};
    if (argument.init)
      entry[key::kInit] = argument.init->str();
    if (!argument.param.empty())
      entry[key::kParam] = argument.param;
    if (!argument.unit.empty())
      entry[key::kUnit] = argument.unit;
    if (!argument.slot.empty())
      entry[key::kSlot] = argument.slot;
    if (argument.placement == Placement::Host)
      entry[key::kPlacement] = key::kPlacementHost;
    if (argument.role == ArgRole::Buffer)
      entry[key::kPersistent] = argument.persistent;
    // A hyper's recorded value (zshard.default, checked by the contract).
    if (auto recorded = contract.getStep().getArgAttrOfType<FloatAttr>(
            argument.index, contract::kDefault))
      entry[key::kDefault] = recorded.getValueAsDouble();
    arguments.push_back(std::move(entry));
  }
  llvm::json::Array results;
  for (const StepResult &result : contract.getResults()) {
    llvm::json::Object entry{
        {key::kIndex, result.index},
        {key::kRole, stringifyResultRole(result.role)},
        {key::kDType, getDTypeName(result.type.getElementType())},
        {key::kShape, shapeOf(result.type)}};
    if (!result.name.empty())
      entry[key::kName] = result.name;
    for (const StepArgument &argument : contract.getArguments())
      if (!argument.unit.empty() && argument.name == result.name) {
        entry[key::kUnit] = argument.unit;
        if (!argument.slot.empty())
          entry[key::kSlot] = argument.slot;
      }
    results.push_back(std::move(entry));
  }
  llvm::json::Array units;
  for (UnitOp unit : module.getOps<UnitOp>())
    units.push_back(describeUnit(unit, contract));
  // The device grid, when the step is sharded: the runtime builds it and the
  // collectives name its axes. A dynamic size is -1 (taken from the launch).
  llvm::json::Value grid = nullptr;
  int64_t ranks = 1;
  for (auto gridOp : module.getOps<shard::GridOp>()) {
    llvm::json::Array shape;
    for (int64_t dim : gridOp.getShape()) {
      shape.push_back(ShapedType::isDynamic(dim) ? int64_t(-1) : dim);
      ranks *= ShapedType::isDynamic(dim) ? 1 : dim;
    }
    grid = llvm::json::Object{{key::kName, gridOp.getSymName()},
                              {key::kShape, std::move(shape)}};
  }
  llvm::json::Object moduleAttrs;
  for (NamedAttribute attr : module->getAttrs())
    if (auto text = dyn_cast<StringAttr>(attr.getValue()))
      moduleAttrs[attr.getName().getValue()] = text.getValue();
  return llvm::json::Object{{key::kFormat, key::kFormatName},
                            {key::kVersionKey, key::kVersion},
                            {key::kLibrary, key::kDefaultLibrary},
                            {key::kEntry, key::kDefaultEntry},
                            {key::kSignature, getSignatureHash(contract)},
                            {key::kRanks, ranks},
                            {key::kGrid, std::move(grid)},
                            {key::kModule, std::move(moduleAttrs)},
                            {key::kArguments, std::move(arguments)},
                            {key::kResults, std::move(results)},
                            {key::kUnits, std::move(units)}};
}

SmallVector<bool> zshard::getInPlaceResults(const StepContract &contract,
                                            func::FuncOp lowered) {
  SmallVector<bool> inPlace;
  unsigned numArguments = contract.getArguments().size();
  for (const StepResult &result : contract.getResults()) {
    unsigned outParam = numArguments + result.index;
    inPlace.push_back(outParam < lowered.getNumArguments() &&
                      lowered.getArgAttr(outParam, contract::kInPlace));
  }
  return inPlace;
}

void zshard::recordInPlaceResults(llvm::json::Object &manifest,
                                  const StepContract &contract,
                                  ArrayRef<bool> inPlace) {
  if (llvm::json::Array *results = manifest.getArray(key::kResults))
    for (auto [result, updatedInPlace] : llvm::zip(*results, inPlace))
      if (updatedInPlace)
        (*result.getAsObject())[key::kInPlace] = true;
  manifest[key::kSignature] = getSignatureHash(contract, inPlace);
}

void zshard::recordTarget(llvm::json::Object &manifest, StringRef target,
                          StringRef chip) {
  manifest[key::kTarget] = target.str();
  if (!chip.empty())
    manifest[key::kChip] = chip.str();
}
