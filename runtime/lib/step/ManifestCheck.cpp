//===- ManifestCheck.cpp - Rules across the fields of a manifest ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/ManifestCheck.h"

#include "core/Failure.h"
#include "core/Fnv1a.h"
#include "core/Shape.h"

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

void appendTensor(std::string &out, const char *role, const std::string &name,
                  const TensorType &type) {
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

} // namespace

void zshard::rt::checkManifestRoles(Manifest &manifest) {
  auto error = [&](const std::string &problem) {
    fail(manifest.path + ": " + problem);
  };
  std::set<std::string> params, optStates, inputs;
  for (const ArgumentDesc &arg : manifest.arguments) {
    std::string what = std::string(roleName(arg.role)) + " '" + arg.name + "'";
    switch (arg.role) {
    case ArgRole::Param:
      if (!params.insert(arg.name).second)
        error("two param arguments are named '" + arg.name + "'");
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
    bool isParam = result.role == ResultRole::ParamOut;
    ArgRole argRole = isParam ? ArgRole::Param : ArgRole::OptState;
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
    if ((arg.role == ArgRole::Param || arg.role == ArgRole::OptState) &&
        !updates.count(arg.index))
      error(std::string(roleName(arg.role)) + " '" + arg.name + "' has no " +
            (arg.role == ArgRole::Param ? "param_out" : "opt_state_out") +
            " result");
}

std::string zshard::rt::signatureText(const Manifest &manifest) {
  std::string text;
  for (const ArgumentDesc &arg : manifest.arguments)
    appendTensor(text, roleName(arg.role), arg.name, arg.type);
  text += "->";
  for (const ResultDesc &result : manifest.results)
    appendTensor(text, roleName(result.role), result.name, result.type);
  return text;
}

std::string zshard::rt::computeSignature(const Manifest &manifest) {
  return hex16(fnv1a64(signatureText(manifest)));
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
