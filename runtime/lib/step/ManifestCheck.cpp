//===- ManifestCheck.cpp - Rules across the fields of a manifest ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/ManifestCheck.h"

#include "core/Failure.h"
#include "core/Shape.h"
#include "zshard/abi/Fnv1a.h"

#include <algorithm>
#include <map>
#include <set>

using namespace zshard::rt;

namespace {

std::string typeString(const TensorType &type) {
  return std::string(manifestName(type.dtype)) + " " + shapeString(type.shape);
}

bool sameType(const TensorType &a, const TensorType &b) {
  return a.dtype == b.dtype && a.shape == b.shape;
}

void appendTensor(std::string &out, const std::string &role,
                  const std::string &name, const TensorType &type) {
  out += role;
  out += ':';
  out += name;
  out += ':';
  out += manifestName(type.dtype);
  out += ':';
  for (size_t i = 0; i < type.shape.size(); ++i)
    out += (i ? "x" : "") + std::to_string(type.shape[i]);
  out += ';';
}

std::string axesString(const std::vector<int64_t> &axes) {
  return shapeString(axes);
}

} // namespace

void zshard::rt::checkManifestGrid(const Manifest &manifest) {
  auto error = [&](const std::string &problem) {
    fail(manifest.path + ": " + problem);
  };
  if (!manifest.grid) {
    if (manifest.ranks != 1)
      error("ranks " + std::to_string(manifest.ranks) +
            " needs a grid (\"grid\" is null: the artifact is single-rank)");
  } else {
    const GridDesc &grid = *manifest.grid;
    int64_t product = 1;
    for (int64_t dim : grid.shape)
      if (__builtin_mul_overflow(product, dim, &product))
        error("grid shape " + shapeString(grid.shape) + " is too large");
    if (product != manifest.ranks)
      error("ranks " + std::to_string(manifest.ranks) +
            " is not the number of ranks of grid '" + grid.name + "' " +
            shapeString(grid.shape) + " (" + std::to_string(product) + ")");
  }

  std::set<std::string> names;
  for (const UnitDesc &unit : manifest.units) {
    std::string what = "unit '" + unit.name + "'";
    if (!names.insert(unit.name).second)
      error("two units are named '" + unit.name + "'");
    int64_t axes = manifest.grid ? int64_t(manifest.grid->shape.size()) : 0;
    std::set<int64_t> seen;
    uint64_t groupSize = 1;
    // The axes of a unit without shards say how its gradients are reduced:
    // nothing the runtime uses, and nothing to check without a grid.
    bool checkAxes = manifest.grid || unit.sharded();
    for (const std::vector<int64_t> *list :
         {&unit.shardAxes, &unit.replicateAxes})
      for (int64_t axis : checkAxes ? *list : std::vector<int64_t>()) {
        if (axis >= axes)
          error(what + ": axis " + std::to_string(axis) +
                (manifest.grid
                     ? " is not an axis of grid '" + manifest.grid->name +
                           "' " + shapeString(manifest.grid->shape)
                     : " needs a grid, and the manifest has none"));
        if (!seen.insert(axis).second)
          error(what + ": axis " + std::to_string(axis) +
                " appears twice in shard_axes " + axesString(unit.shardAxes) +
                " and replicate_axes " + axesString(unit.replicateAxes));
        if (list == &unit.shardAxes)
          groupSize *= uint64_t(manifest.grid->shape[size_t(axis)]);
      }
    if (unit.sharded()) {
      if (!manifest.grid)
        error(what + " is " + strategyName(unit.strategy) +
              ", which needs a grid, and the manifest has none");
      uint64_t padded = 0;
      if (__builtin_mul_overflow(unit.shardSize, groupSize, &padded) ||
          padded != unit.padded)
        error(what + ": padded " + std::to_string(unit.padded) +
              " is not shard_size " + std::to_string(unit.shardSize) +
              " times the " + std::to_string(groupSize) +
              " ranks of shard_axes " + axesString(unit.shardAxes));
    }
    // Members inside the buffer, in any order, without overlapping.
    std::vector<std::pair<uint64_t, const UnitMember *>> spans;
    for (const UnitMember &member : unit.members) {
      uint64_t end = 0;
      if (__builtin_add_overflow(member.offset, member.elements, &end) ||
          (unit.sharded() && end > unit.padded))
        error(what + ": member '" + member.name + "' at offset " +
              std::to_string(member.offset) + " with " +
              std::to_string(member.elements) + " elements ends past padded " +
              std::to_string(unit.padded));
      spans.emplace_back(member.offset, &member);
    }
    std::sort(spans.begin(), spans.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    for (size_t i = 1; i < spans.size(); ++i) {
      const UnitMember &prev = *spans[i - 1].second;
      if (prev.offset + prev.elements > spans[i].first)
        error(what + ": members '" + prev.name + "' and '" +
              spans[i].second->name + "' overlap");
    }
    std::set<std::string> slots;
    for (const UnitSlot &slot : unit.slots)
      if (!slots.insert(slot.name).second)
        error(what + ": two slots are named '" + slot.name + "'");
  }
}

void zshard::rt::checkManifestRoles(Manifest &manifest) {
  auto error = [&](const std::string &problem) {
    fail(manifest.path + ": " + problem);
  };
  std::set<std::string> params, optStates, inputs, shards, buffers;
  for (const ArgumentDesc &arg : manifest.arguments) {
    std::string what = std::string(roleName(arg.role)) + " '" + arg.name + "'";
    switch (arg.role) {
    case ArgRole::ParamShard:
    case ArgRole::OptStateShard: {
      if (!shards.insert(arg.name).second)
        error("two param_shard or opt_state_shard arguments are named '" +
              arg.name + "'");
      const UnitDesc *unit = manifest.findUnit(arg.unit);
      if (!unit)
        error(what + " belongs to unit '" + arg.unit +
              "', which is not in \"units\"");
      if (arg.role == ArgRole::ParamShard ? !unit->paramsSharded()
                                          : !unit->sharded())
        error(what + " belongs to unit '" + arg.unit + "', which is " +
              strategyName(unit->strategy) +
              (unit->sharded() ? " (its parameters are param arguments)"
                               : " (its parameters and optimizer state are "
                                 "param and opt_state arguments)"));
      TensorType want;
      want.shape = {int64_t(unit->shardSize)};
      std::string wantName = unit->name;
      if (arg.role == ArgRole::ParamShard) {
        want.dtype = unit->paramDType;
      } else {
        const UnitSlot *slot = unit->findSlot(arg.slot);
        if (!slot)
          error(what + " names slot '" + arg.slot + "', which unit '" +
                unit->name + "' does not have");
        want.dtype = slot->dtype;
        wantName += "." + slot->name;
      }
      if (arg.name != wantName)
        error(what + " must be named '" + wantName + "'");
      if (!sameType(arg.type, want))
        error(what + " is " + typeString(arg.type) + " but unit '" +
              unit->name + "' needs " + typeString(want));
      break;
    }
    case ArgRole::Param:
      if (!params.insert(arg.name).second)
        error("two param arguments are named '" + arg.name + "'");
      break;
    case ArgRole::Buffer:
      if (!buffers.insert(arg.name).second)
        error("two buffer arguments are named '" + arg.name + "'");
      break;
    case ArgRole::OptState:
      if (!optStates.insert(arg.name).second)
        error("two opt_state arguments are named '" + arg.name + "'");
      break;
    case ArgRole::Batch:
    case ArgRole::Hyper:
      if (!inputs.insert(arg.name).second)
        error("two batch or hyper arguments are named '" + arg.name + "'");
      if (arg.role == ArgRole::Hyper && !arg.type.shape.empty())
        error(what + " must be a scalar (shape []), got " +
              shapeString(arg.type.shape));
      break;
    }
  }
  for (const ArgumentDesc &arg : manifest.arguments) {
    if (arg.role != ArgRole::OptState)
      continue;
    std::string what = "opt_state '" + arg.name + "'";
    if (params.count(arg.name))
      error(what + " has the name of a param");
    const ArgumentDesc *param =
        manifest.findArgument(ArgRole::Param, arg.param);
    if (!param)
      error(what + " belongs to param '" + arg.param +
            "', which is not an "
            "argument");
    if (param->type.shape != arg.type.shape)
      error(what + " has shape " + shapeString(arg.type.shape) +
            " but its param '" + param->name + "' has " +
            shapeString(param->type.shape));
  }

  // Every sharded unit is complete; the members of units without parameter
  // shards (no_shard, zero1) are param arguments.
  for (const UnitDesc &unit : manifest.units) {
    std::string what = "unit '" + unit.name + "'";
    if (!unit.paramsSharded())
      for (const UnitMember &member : unit.members) {
        const ArgumentDesc *param =
            manifest.findArgument(ArgRole::Param, member.name);
        if (!param)
          error(what + " is " + strategyName(unit.strategy) +
                ", but its member '" + member.name +
                "' is not a param argument");
        if (param->type.shape != member.shape)
          error(what + ": member '" + member.name + "' has shape " +
                shapeString(member.shape) + " but param '" + member.name +
                "' has " + shapeString(param->type.shape));
      }
    if (!unit.sharded())
      continue;
    if (unit.paramsSharded() &&
        !manifest.findArgument(ArgRole::ParamShard, unit.name))
      error(what + " has no param_shard argument '" + unit.name + "'");
    for (const UnitSlot &slot : unit.slots)
      if (!manifest.findArgument(ArgRole::OptStateShard,
                                 unit.name + "." + slot.name))
        error(what + " has no opt_state_shard argument '" + unit.name + "." +
              slot.name + "' for its slot '" + slot.name + "'");
  }

  // The names of the consolidated state are unique.
  std::map<std::string, std::string> stateNames; // name -> what holds it
  auto claim = [&](const std::string &name, const std::string &holder) {
    auto [it, inserted] = stateNames.emplace(name, holder);
    if (!inserted)
      error("state tensor '" + name + "' is both " + it->second + " and " +
            holder);
  };
  for (const ArgumentDesc &arg : manifest.arguments)
    if (arg.role == ArgRole::Param || arg.role == ArgRole::OptState ||
        arg.role == ArgRole::Buffer)
      claim(arg.name, std::string(roleName(arg.role)) + " '" + arg.name + "'");
  for (const UnitDesc &unit : manifest.units) {
    if (!unit.sharded())
      continue;
    for (const UnitMember &member : unit.members) {
      if (unit.paramsSharded())
        claim(member.name, "a member of unit '" + unit.name + "'");
      for (const UnitSlot &slot : unit.slots)
        claim(member.name + "." + slot.name,
              "slot '" + slot.name + "' of unit '" + unit.name + "'");
    }
  }

  int losses = 0;
  std::map<int64_t, const ResultDesc *> updates; // argument index -> result
  for (ResultDesc &result : manifest.results) {
    if (result.role == ResultRole::Loss) {
      if (++losses > 1)
        error("more than one loss result");
      if (!result.type.shape.empty() || !isFloatDType(result.type.dtype))
        error("the loss must be a float scalar, got " +
              typeString(result.type));
      continue;
    }
    // Every result but the loss updates an argument.
    ArgRole argRole = *zshard_abi::updatedRole(result.role);
    std::string what =
        std::string(roleName(result.role)) + " '" + result.name + "'";
    const ArgumentDesc *arg = manifest.findArgument(argRole, result.name);
    if (!arg)
      error(what + " updates no " + roleName(argRole) +
            " argument of that "
            "name");
    if (!sameType(arg->type, result.type))
      error(what + " is " + typeString(result.type) + " but its argument is " +
            typeString(arg->type));
    if (!updates.emplace(arg->index, &result).second)
      error(what + " is returned twice");
    result.argument = arg->index;
  }
  if (losses == 0)
    error("no loss result");
  for (const ArgumentDesc &arg : manifest.arguments)
    if (isStateRole(arg.role) && !updates.count(arg.index))
      error(std::string(roleName(arg.role)) + " '" + arg.name + "' has no " +
            roleName(*zshard_abi::updateRole(arg.role)) + " result");
}

std::string zshard::rt::signatureText(const Manifest &manifest) {
  std::string text;
  for (const ArgumentDesc &arg : manifest.arguments)
    appendTensor(text, roleName(arg.role), arg.name, arg.type);
  text += "->";
  for (const ResultDesc &result : manifest.results)
    appendTensor(text,
                 std::string(roleName(result.role)) +
                     (result.inPlace ? "(in_place)" : ""),
                 result.name, result.type);
  return text;
}

std::string zshard::rt::computeSignature(const Manifest &manifest) {
  return zshard_abi::hex16(zshard_abi::fnv1a64(signatureText(manifest)));
}

void zshard::rt::checkManifestSignature(const Manifest &manifest) {
  const std::string &signature = manifest.signature;
  bool wellFormed = signature.size() == 16;
  for (char ch : signature)
    wellFormed &= (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
  if (!wellFormed)
    fail(manifest.path + ": signature '" + signature +
         "' is not 16 lower-case hex digits");
  std::string computed = computeSignature(manifest);
  if (computed != signature)
    fail(manifest.path + ": signature " + signature +
         " does not match the arguments and results, whose signature is " +
         computed);
}
