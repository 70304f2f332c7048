//===- Manifest.cpp - Reading the manifest of a compiled artifact ---------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// JSON to Manifest, field by field, with one message per problem. The rules
// across fields (roles, pairing of results with arguments, the signature) are
// in ManifestCheck.cpp.
//
//===----------------------------------------------------------------------===//

#include "step/Manifest.h"

#include "core/Failure.h"
#include "core/Shape.h"
#include "io/FileBytes.h"
#include "step/EvalEntry.h"
#include "step/ManifestCheck.h"
#include "step/ManifestReader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include <sys/stat.h>

using namespace zshard::rt;
using Json = nlohmann::ordered_json;
namespace key = zshard_abi::manifest;

namespace {

std::string describe(const char *list, size_t position, const Json &entry) {
  std::string where = std::string(list) + "[" + std::to_string(position) + "]";
  auto name = entry.find(key::kName);
  if (name != entry.end() && name->is_string() &&
      !name->get<std::string>().empty())
    where += " ('" + name->get<std::string>() + "')";
  return where;
}

ArgumentDesc readArgument(const ManifestReader &reader, const Json &entry,
                          const std::string &where) {
  if (!entry.is_object())
    reader.error(where, "must be an object, got " + entry.dump());
  ArgumentDesc arg;
  arg.index = reader.integer(entry, key::kIndex, where);
  std::string role = reader.string(entry, key::kRole, where);
  bool known = false;
  for (ArgRole candidate : allArgRoles)
    if (role == roleName(candidate)) {
      arg.role = candidate;
      known = true;
    }
  if (!known)
    reader.error(where, "unknown argument role '" + role +
                            "' (known: param, opt_state, batch, hyper, "
                            "param_shard, opt_state_shard, buffer)");
  arg.name = reader.string(entry, key::kName, where);
  if (arg.name.empty())
    reader.error(where, "field 'name' is empty");
  arg.type = reader.tensorType(entry, where);
  if (arg.role == ArgRole::Param || arg.role == ArgRole::OptState ||
      arg.role == ArgRole::Buffer) {
    arg.initText = reader.string(entry, key::kInit, where);
    try {
      arg.init = parseInitSpec(arg.initText);
    } catch (const Failure &e) {
      reader.error(where, e.what());
    }
    if (arg.role != ArgRole::OptState && arg.init.kind == InitSpec::Kind::Param)
      reader.error(where, "init spec 'param' is for opt_state arguments only");
    if (!initFitsDType(arg.init, arg.type.dtype))
      reader.error(where, "init spec '" + arg.initText +
                              "' needs a "
                              "floating-point dtype, not " +
                              manifestName(arg.type.dtype));
  }
  if (arg.role == ArgRole::OptState) {
    arg.param = reader.string(entry, key::kParam, where);
    if (arg.param.empty())
      reader.error(where, "field 'param' is empty");
  }
  if (isShardRole(arg.role)) {
    arg.unit = reader.string(entry, key::kUnit, where);
    if (arg.unit.empty())
      reader.error(where, "field 'unit' is empty");
  }
  if (arg.role == ArgRole::OptStateShard) {
    arg.slot = reader.string(entry, key::kSlot, where);
    if (arg.slot.empty())
      reader.error(where, "field 'slot' is empty");
  }
  if (entry.contains(key::kPersistent)) {
    const Json &value = entry[key::kPersistent];
    if (arg.role != ArgRole::Buffer)
      reader.error(where, "field 'persistent' is for buffer arguments only");
    if (!value.is_boolean())
      reader.error(where, "field 'persistent' must be true or false, got " +
                              value.dump());
    arg.persistent = value.get<bool>();
  } else if (arg.role == ArgRole::Buffer) {
    reader.error(where, "a buffer needs field 'persistent'");
  }
  if (entry.contains(key::kDefault)) {
    const Json &value = entry[key::kDefault];
    if (arg.role != ArgRole::Hyper)
      reader.error(where, "field 'default' is for hyper arguments only");
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      reader.error(where, "field 'default' must be a finite number, got " +
                              value.dump());
    arg.defaultValue = value.get<double>();
  }
  if (entry.contains(key::kPlacement)) {
    std::string placement = reader.string(entry, key::kPlacement, where);
    bool optState =
        arg.role == ArgRole::OptState || arg.role == ArgRole::OptStateShard;
    if (placement == key::kPlacementHost && optState)
      arg.placement = Placement::Host;
    else if (placement == key::kPlacementHost)
      reader.error(where, "only optimizer state can be placed in host memory");
    else if (placement != key::kPlacementDevice)
      reader.error(where, "placement must be 'device' or 'host', got '" +
                              placement + "'");
  }
  return arg;
}

ResultDesc readResult(const ManifestReader &reader, const Json &entry,
                      const std::string &where) {
  if (!entry.is_object())
    reader.error(where, "must be an object, got " + entry.dump());
  ResultDesc result;
  result.index = reader.integer(entry, key::kIndex, where);
  std::string role = reader.string(entry, key::kRole, where);
  if (role == "loss")
    result.role = ResultRole::Loss;
  else if (role == "param_out")
    result.role = ResultRole::ParamOut;
  else if (role == "opt_state_out")
    result.role = ResultRole::OptStateOut;
  else if (role == "param_shard_out")
    result.role = ResultRole::ParamShardOut;
  else if (role == "opt_state_shard_out")
    result.role = ResultRole::OptStateShardOut;
  else
    reader.error(where, "unknown result role '" + role +
                            "' (known: loss, param_out, opt_state_out, "
                            "param_shard_out, opt_state_shard_out)");
  if (result.role == ResultRole::Loss) {
    if (entry.contains(key::kName))
      result.name = reader.string(entry, key::kName, where);
    if (!result.name.empty())
      reader.error(where, "the loss has no name, got '" + result.name + "'");
  } else {
    result.name = reader.string(entry, key::kName, where);
    if (result.name.empty())
      reader.error(where, "field 'name' is empty");
  }
  result.type = reader.tensorType(entry, where);
  if (entry.contains(key::kUnit))
    result.unit = reader.string(entry, key::kUnit, where);
  if (entry.contains(key::kSlot))
    result.slot = reader.string(entry, key::kSlot, where);
  if (entry.contains(key::kInPlace)) {
    result.inPlace = reader.boolean(entry, key::kInPlace, where);
    if (result.inPlace && result.role == ResultRole::Loss)
      reader.error(where, "the loss cannot be in place");
  }
  return result;
}

InitSpec initSpec(const ManifestReader &reader, const std::string &text,
                  const std::string &where) {
  try {
    return parseInitSpec(text);
  } catch (const Failure &e) {
    reader.error(where, e.what());
  }
}

GridDesc readGrid(const ManifestReader &reader, const Json &json) {
  const std::string where = "grid";
  if (!json.is_object())
    reader.error(where, "must be an object {\"name\", \"shape\"} or null, "
                        "got " +
                            json.dump());
  GridDesc grid;
  grid.name = reader.string(json, key::kName, where);
  const Json &shape = reader.field(json, key::kShape, where);
  if (shape.is_array())
    for (const Json &dim : shape)
      if (dim.is_number_integer() && dim.get<int64_t>() == -1)
        reader.error(where, "shape " + shape.dump() +
                                " has a dynamic size: this runtime runs "
                                "artifacts compiled for a fixed rank count");
  grid.shape = reader.integers(json, key::kShape, where, 1);
  if (grid.shape.empty() || grid.shape.size() > 6)
    reader.error(where, "shape " + shape.dump() + " must have 1 to 6 axes");
  return grid;
}

UnitDesc readUnit(const ManifestReader &reader, const Json &entry,
                  const std::string &where) {
  if (!entry.is_object())
    reader.error(where, "must be an object, got " + entry.dump());
  UnitDesc unit;
  unit.name = reader.string(entry, key::kName, where);
  if (unit.name.empty())
    reader.error(where, "field 'name' is empty");
  std::string strategy = reader.string(entry, key::kStrategy, where);
  if (std::optional<ShardStrategy> known =
          zshard_abi::parseStrategyName(strategy)) {
    unit.strategy = *known;
  } else {
    std::string names;
    for (ShardStrategy candidate : zshard_abi::kStrategies)
      names += std::string(names.empty() ? "" : ", ") + strategyName(candidate);
    reader.error(where,
                 "unknown strategy '" + strategy + "' (known: " + names + ")");
  }
  unit.shardAxes = reader.integers(entry, key::kShardAxes, where, 0);
  if (entry.contains(key::kReplicateAxes))
    unit.replicateAxes = reader.integers(entry, key::kReplicateAxes, where, 0);
  // A unit without shards may leave its sizes unknown (-1).
  int64_t padded = reader.integer(entry, key::kPadded, where);
  int64_t shardSize = reader.integer(entry, key::kShardSize, where);
  if (unit.sharded() && (padded < 0 || shardSize < 0))
    reader.error(where, "padded " + std::to_string(padded) +
                            " and shard_size " + std::to_string(shardSize) +
                            " must be non-negative for a " +
                            strategyName(unit.strategy) + " unit");
  unit.padded = uint64_t(std::max<int64_t>(padded, 0));
  unit.shardSize = uint64_t(std::max<int64_t>(shardSize, 0));
  unit.paramDType = reader.dtype(entry, key::kParamDType, where);
  unit.reduceDType = entry.contains(key::kReduceDType)
                         ? reader.dtype(entry, key::kReduceDType, where)
                         : unit.paramDType;
  if (entry.contains(key::kBufferDType))
    unit.bufferDType = reader.dtype(entry, key::kBufferDType, where);

  const Json &members = reader.field(entry, key::kMembers, where);
  if (!members.is_array())
    reader.error(where, "field 'members' must be a list");
  for (size_t i = 0; i < members.size(); ++i) {
    const Json &m = members[i];
    std::string at = where + ": " + describe("members", i, m);
    if (!m.is_object())
      reader.error(at, "must be an object, got " + m.dump());
    UnitMember member;
    member.name = reader.string(m, key::kName, at);
    if (member.name.empty())
      reader.error(at, "field 'name' is empty");
    member.shape = reader.integers(m, key::kShape, at, 0);
    if (!shapeElements(member.shape, member.elements))
      reader.error(at, "shape " + shapeString(member.shape) + " is too large");
    member.offset = uint64_t(reader.integer(m, key::kOffset, at));
    if (int64_t(member.offset) < 0)
      reader.error(at, "offset must be non-negative");
    // Members that are param arguments (no_shard, zero1) have their
    // arguments' init specs; the others need their own.
    if (m.contains(key::kInit) || unit.paramsSharded()) {
      member.initText = reader.string(m, key::kInit, at);
      member.init = initSpec(reader, member.initText, at);
    }
    if (member.initText.empty())
      member.init.kind = InitSpec::Kind::Zeros;
    else if (member.init.kind == InitSpec::Kind::Param)
      reader.error(at, "init spec 'param' is for optimizer state only");
    if (!initFitsDType(member.init, unit.paramDType))
      reader.error(at, "init spec '" + member.initText +
                           "' needs a floating-point dtype, not " +
                           manifestName(unit.paramDType));
    unit.members.push_back(std::move(member));
  }

  if (auto slots = entry.find(key::kSlots); slots != entry.end()) {
    if (!slots->is_array())
      reader.error(where, "field 'slots' must be a list");
    for (size_t i = 0; i < slots->size(); ++i) {
      const Json &s = (*slots)[i];
      std::string at = where + ": slots[" + std::to_string(i) + "]";
      if (!s.is_object())
        reader.error(at, "must be an object, got " + s.dump());
      UnitSlot slot;
      slot.name = reader.string(s, key::kSlot, at);
      if (slot.name.empty())
        reader.error(at, "field 'slot' is empty");
      at += " ('" + slot.name + "')";
      slot.dtype = reader.dtype(s, key::kDType, at);
      const Json &inits = reader.field(s, key::kInits, at);
      if (!inits.is_array() || inits.size() != unit.members.size())
        reader.error(at, "field 'inits' must be a list of " +
                             std::to_string(unit.members.size()) +
                             " init specs, one per member, got " +
                             inits.dump());
      for (const Json &init : inits) {
        if (!init.is_string())
          reader.error(at,
                       "field 'inits' must hold strings, got " + init.dump());
        slot.initTexts.push_back(init.get<std::string>());
        slot.inits.push_back(initSpec(reader, slot.initTexts.back(), at));
        if (!initFitsDType(slot.inits.back(), slot.dtype))
          reader.error(at, "init spec '" + slot.initTexts.back() +
                               "' needs a floating-point dtype, not " +
                               manifestName(slot.dtype));
      }
      unit.slots.push_back(std::move(slot));
    }
  }
  return unit;
}

/// Sorts \p items by index and checks that the indices are 0..n-1.
template <typename T>
void orderByIndex(const ManifestReader &reader, std::vector<T> &items,
                  const char *list) {
  std::stable_sort(items.begin(), items.end(),
                   [](const T &a, const T &b) { return a.index < b.index; });
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].index != int64_t(i))
      reader.error(list, "indices must be 0.." +
                             std::to_string(int64_t(items.size()) - 1) +
                             " each once; index " +
                             std::to_string(items[i].index) +
                             (i > 0 && items[i].index == items[i - 1].index
                                  ? " appears twice"
                                  : " is out of place"));
}

} // namespace

Manifest zshard::rt::parseManifest(std::string_view text,
                                   const std::string &path,
                                   const std::string &dir) {
  ManifestReader reader(path);
  Json json;
  try {
    json = Json::parse(text.begin(), text.end());
  } catch (const Json::exception &e) {
    reader.error("", std::string("invalid JSON (") + e.what() + ")");
  }
  if (!json.is_object())
    reader.error("",
                 std::string("must be a JSON object, got ") + json.type_name());

  Manifest manifest;
  manifest.dir = dir;
  manifest.path = path;
  std::string format = reader.string(json, key::kFormat, "");
  if (format != key::kFormatName)
    reader.error("",
                 "format '" + format + "' is not '" + key::kFormatName + "'");
  int64_t version = reader.integer(json, key::kVersionKey, "");
  if (version != key::kVersion)
    reader.error("", "manifest version " + std::to_string(version) +
                         " is not supported: this runtime reads version " +
                         std::to_string(key::kVersion) +
                         " (compile the step with a zshard-compile of the "
                         "same release)");
  manifest.library = reader.string(json, key::kLibrary, "");
  if (manifest.library.empty())
    reader.error("", "field 'library' is empty");
  manifest.entry = reader.string(json, key::kEntry, "");
  if (manifest.entry.empty())
    reader.error("", "field 'entry' is empty");
  manifest.signature = reader.string(json, key::kSignature, "");
  manifest.ranks = reader.integer(json, key::kRanks, "");
  if (manifest.ranks < 1)
    reader.error("", "ranks " + std::to_string(manifest.ranks) +
                         " must be at least 1");

  if (json.contains(key::kTarget)) {
    manifest.target = reader.string(json, key::kTarget, "");
    if (manifest.target != key::kTargetCpu &&
        manifest.target != key::kTargetCuda)
      reader.error("",
                   "target '" + manifest.target + "' is not 'cpu' or 'cuda'");
  }
  if (json.contains(key::kChip))
    manifest.chip = reader.string(json, key::kChip, "");

  if (auto module = json.find(key::kModule); module != json.end()) {
    if (!module->is_object())
      reader.error("module", "must be an object of strings");
    for (auto &[key, value] : module->items()) {
      if (!value.is_string())
        reader.error("module", "attribute '" + key +
                                   "' must be a string, got " + value.dump());
      manifest.module.emplace_back(key, value.get<std::string>());
    }
  }
  if (auto grid = json.find(key::kGrid); grid != json.end() && !grid->is_null())
    manifest.grid = readGrid(reader, *grid);
  if (auto units = json.find(key::kUnits); units != json.end()) {
    if (!units->is_array())
      reader.error("units", "must be a list");
    for (size_t i = 0; i < units->size(); ++i)
      manifest.units.push_back(
          readUnit(reader, (*units)[i], describe("units", i, (*units)[i])));
  }

  const Json &arguments = reader.field(json, key::kArguments, "");
  if (!arguments.is_array())
    reader.error("arguments", "must be a list");
  for (size_t i = 0; i < arguments.size(); ++i)
    manifest.arguments.push_back(readArgument(
        reader, arguments[i], describe("arguments", i, arguments[i])));
  const Json &results = reader.field(json, key::kResults, "");
  if (!results.is_array())
    reader.error("results", "must be a list");
  for (size_t i = 0; i < results.size(); ++i)
    manifest.results.push_back(
        readResult(reader, results[i], describe("results", i, results[i])));
  orderByIndex(reader, manifest.arguments, "arguments");
  orderByIndex(reader, manifest.results, "results");

  checkManifestGrid(manifest);
  checkManifestRoles(manifest);
  checkManifestSignature(manifest);
  if (auto eval = json.find(key::kEval); eval != json.end())
    readEvalEntry(reader, *eval, manifest);
  return manifest;
}

Manifest zshard::rt::loadManifest(const std::string &artifactDir) {
  struct stat info;
  if (stat(artifactDir.c_str(), &info) != 0)
    fail(artifactDir + ": no such artifact (expected a directory NAME.zsa "
                       "holding manifest.json)");
  if (!S_ISDIR(info.st_mode))
    fail(artifactDir + ": not an artifact directory (expected a directory "
                       "NAME.zsa holding manifest.json)");
  std::string dir = artifactDir;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  std::string path = dir + "/" + key::kFileName;
  std::vector<unsigned char> bytes = readFileBytes(path);
  return parseManifest(
      std::string_view(reinterpret_cast<const char *>(bytes.data()),
                       bytes.size()),
      path, dir);
}

std::string Manifest::libraryPath() const {
  if (!library.empty() && library.front() == '/')
    return library;
  return dir + "/" + library;
}

const ArgumentDesc *Manifest::findArgument(ArgRole role,
                                           std::string_view name) const {
  for (const ArgumentDesc &arg : arguments)
    if (arg.role == role && arg.name == name)
      return &arg;
  return nullptr;
}

const std::string *Manifest::findModuleAttr(std::string_view key) const {
  for (const auto &[k, v] : module)
    if (k == key)
      return &v;
  return nullptr;
}

const ResultDesc &Manifest::loss() const {
  for (const ResultDesc &result : results)
    if (result.role == ResultRole::Loss)
      return result;
  fail(path + ": no loss result"); // checkManifestRoles rules this out
}

const UnitDesc *Manifest::findUnit(std::string_view name) const {
  for (const UnitDesc &unit : units)
    if (unit.name == name)
      return &unit;
  return nullptr;
}

std::vector<std::pair<const std::string *, const std::vector<int64_t> *>>
Manifest::modelParams() const {
  std::vector<std::pair<const std::string *, const std::vector<int64_t> *>> out;
  for (const ArgumentDesc &arg : arguments) {
    if (arg.role == ArgRole::Param)
      out.emplace_back(&arg.name, &arg.type.shape);
    if (arg.role == ArgRole::ParamShard)
      if (const UnitDesc *unit = findUnit(arg.unit);
          unit && unit->paramsSharded())
        for (const UnitMember &member : unit->members)
          out.emplace_back(&member.name, &member.shape);
  }
  return out;
}

bool zshard::rt::isStateRole(ArgRole role) {
  // State is what a result updates (zshard/abi/Roles.h).
  return zshard_abi::updateRole(role).has_value();
}

bool zshard::rt::isCheckpointed(const ArgumentDesc &arg) {
  return isStateRole(arg.role) ||
         (arg.role == ArgRole::Buffer && arg.persistent);
}

bool zshard::rt::isShardRole(ArgRole role) {
  return role == ArgRole::ParamShard || role == ArgRole::OptStateShard;
}

