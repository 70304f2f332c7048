//===- Manifest.cpp - the artifact manifest -------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Target/Artifact.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::zshard;

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
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : getCanonicalSignature(contract, inPlace)) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  std::string hex;
  llvm::raw_string_ostream(hex) << llvm::format_hex_no_prefix(hash, 16);
  return hex;
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
    llvm::json::Object entry{{"name", member.getName()},
                             {"shape", toArray(member.getShape())},
                             {"offset", member.getOffset()}};
    if (paramShard && i < paramShard->memberInits.size())
      entry["init"] = paramShard->memberInits[i].str();
    else if (const StepArgument *param = contract.lookupParam(member.getName()))
      if (param->init)
        entry["init"] = param->init->str();
    members.push_back(std::move(entry));
    ++i;
  }
  llvm::json::Array slots;
  for (const StepArgument *state : stateShards) {
    llvm::json::Array inits;
    for (const InitSpec &spec : state->memberInits)
      inits.push_back(spec.str());
    slots.push_back(llvm::json::Object{
        {"slot", state->slot},
        {"dtype", getDTypeName(state->type.getElementType())},
        {"inits", std::move(inits)}});
  }
  std::optional<int64_t> shardSize = unit.getShardSize();
  return llvm::json::Object{
      {"name", unit.getSymName()},
      {"strategy", stringifyStrategy(unit.getStrategy())},
      {"shard_axes", toArray(unit.getShardAxes())},
      {"replicate_axes", toArray(unit.getReplicateAxes())},
      {"padded", unit.getPaddedSize()},
      {"shard_size", shardSize ? *shardSize : int64_t(-1)},
      {"param_dtype", getDTypeName(unit.getParamType())},
      {"reduce_dtype", getDTypeName(unit.getReduceType())},
      {"members", std::move(members)},
      {"slots", std::move(slots)}};
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
        {"index", argument.index},
        {"role", stringifyArgRole(argument.role)},
        {"name", argument.name},
        {"dtype", getDTypeName(argument.type.getElementType())},
        {"shape", shapeOf(argument.type)}};
    if (argument.init)
      entry["init"] = argument.init->str();
    if (!argument.param.empty())
      entry["param"] = argument.param;
    if (!argument.unit.empty())
      entry["unit"] = argument.unit;
    if (!argument.slot.empty())
      entry["slot"] = argument.slot;
    if (argument.placement == Placement::Host)
      entry["placement"] = "host";
    // A hyper's recorded value (zshard.default, checked by the contract).
    if (auto recorded = contract.getStep().getArgAttrOfType<FloatAttr>(
            argument.index, "zshard.default"))
      entry["default"] = recorded.getValueAsDouble();
    arguments.push_back(std::move(entry));
  }
  llvm::json::Array results;
  for (const StepResult &result : contract.getResults()) {
    llvm::json::Object entry{
        {"index", result.index},
        {"role", stringifyResultRole(result.role)},
        {"dtype", getDTypeName(result.type.getElementType())},
        {"shape", shapeOf(result.type)}};
    if (!result.name.empty())
      entry["name"] = result.name;
    for (const StepArgument &argument : contract.getArguments())
      if (!argument.unit.empty() && argument.name == result.name) {
        entry["unit"] = argument.unit;
        if (!argument.slot.empty())
          entry["slot"] = argument.slot;
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
    grid = llvm::json::Object{{"name", gridOp.getSymName()},
                              {"shape", std::move(shape)}};
  }
  llvm::json::Object moduleAttrs;
  for (NamedAttribute attr : module->getAttrs())
    if (auto text = dyn_cast<StringAttr>(attr.getValue()))
      moduleAttrs[attr.getName().getValue()] = text.getValue();
  return llvm::json::Object{{"format", "zshard-artifact"},
                            {"version", 1},
                            {"library", "step.so"},
                            {"entry", "zshard_step"},
                            {"signature", getSignatureHash(contract)},
                            {"ranks", ranks},
                            {"grid", std::move(grid)},
                            {"module", std::move(moduleAttrs)},
                            {"arguments", std::move(arguments)},
                            {"results", std::move(results)},
                            {"units", std::move(units)}};
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
  if (llvm::json::Array *results = manifest.getArray("results"))
    for (auto [result, updatedInPlace] : llvm::zip(*results, inPlace))
      if (updatedInPlace)
        (*result.getAsObject())["in_place"] = true;
  manifest["signature"] = getSignatureHash(contract, inPlace);
}

void zshard::recordTarget(llvm::json::Object &manifest, StringRef target,
                          StringRef chip) {
  manifest["target"] = target.str();
  if (!chip.empty())
    manifest["chip"] = chip.str();
}
