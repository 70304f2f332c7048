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
#include "step/ManifestCheck.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include <sys/stat.h>

using namespace zshard::rt;
using Json = nlohmann::ordered_json;

namespace {

/// Field access with messages "<path>: <where>: <problem>".
class Reader {
public:
  explicit Reader(const std::string &path) : path(path) {}

  [[noreturn]] void error(const std::string &where,
                          const std::string &problem) const {
    fail(path + ": " + (where.empty() ? "" : where + ": ") + problem);
  }

  const Json &field(const Json &object, const char *key,
                    const std::string &where) const {
    auto it = object.find(key);
    if (it == object.end())
      error(where, std::string("missing field '") + key + "'");
    return *it;
  }

  std::string string(const Json &object, const char *key,
                     const std::string &where) const {
    const Json &value = field(object, key, where);
    if (!value.is_string())
      error(where, std::string("field '") + key + "' must be a string, got " +
                       value.dump());
    return value.get<std::string>();
  }

  int64_t integer(const Json &object, const char *key,
                  const std::string &where) const {
    const Json &value = field(object, key, where);
    if (!value.is_number_integer() ||
        (value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX))
      error(where, std::string("field '") + key + "' must be an integer, got " +
                       value.dump());
    return value.get<int64_t>();
  }

  TensorType tensorType(const Json &object, const std::string &where) const {
    TensorType type;
    std::string dtype = string(object, "dtype", where);
    auto parsed = parseManifestDType(dtype);
    if (!parsed)
      error(where, "unknown dtype '" + dtype +
                       "' (known: " + manifestDTypeList() + ")");
    type.dtype = *parsed;
    const Json &shape = field(object, "shape", where);
    if (!shape.is_array())
      error(where, "field 'shape' must be a list of non-negative integers, "
                   "got " +
                       shape.dump());
    for (const Json &dim : shape) {
      if (!dim.is_number_unsigned() || dim.get<uint64_t>() > INT64_MAX)
        error(where, "field 'shape' must be a list of non-negative "
                     "integers, got " +
                         shape.dump());
      type.shape.push_back(dim.get<int64_t>());
    }
    if (!shapeElements(type.shape, type.elements) ||
        __builtin_mul_overflow(type.elements, dtypeSize(type.dtype),
                               &type.bytes))
      error(where, "shape " + shapeString(type.shape) + " is too large");
    return type;
  }

private:
  const std::string &path;
};

std::string describe(const char *list, size_t position, const Json &entry) {
  std::string where = std::string(list) + "[" + std::to_string(position) + "]";
  auto name = entry.find("name");
  if (name != entry.end() && name->is_string() &&
      !name->get<std::string>().empty())
    where += " ('" + name->get<std::string>() + "')";
  return where;
}

ArgumentDesc readArgument(const Reader &reader, const Json &entry,
                          const std::string &where) {
  if (!entry.is_object())
    reader.error(where, "must be an object, got " + entry.dump());
  ArgumentDesc arg;
  arg.index = reader.integer(entry, "index", where);
  std::string role = reader.string(entry, "role", where);
  if (role == "param")
    arg.role = ArgRole::Param;
  else if (role == "opt_state")
    arg.role = ArgRole::OptState;
  else if (role == "batch")
    arg.role = ArgRole::Batch;
  else if (role == "hyper")
    arg.role = ArgRole::Hyper;
  else
    reader.error(where, "unknown argument role '" + role +
                            "' (known: param, opt_state, batch, hyper)");
  arg.name = reader.string(entry, "name", where);
  if (arg.name.empty())
    reader.error(where, "field 'name' is empty");
  arg.type = reader.tensorType(entry, where);
  if (arg.role == ArgRole::Param || arg.role == ArgRole::OptState) {
    arg.initText = reader.string(entry, "init", where);
    try {
      arg.init = parseInitSpec(arg.initText);
    } catch (const Failure &e) {
      reader.error(where, e.what());
    }
    if (arg.role == ArgRole::Param && arg.init.kind == InitSpec::Kind::Param)
      reader.error(where, "init spec 'param' is for opt_state arguments only");
    if (!initFitsDType(arg.init, arg.type.dtype))
      reader.error(where, "init spec '" + arg.initText +
                              "' needs a "
                              "floating-point dtype, not " +
                              manifestName(arg.type.dtype));
  }
  if (arg.role == ArgRole::OptState) {
    arg.param = reader.string(entry, "param", where);
    if (arg.param.empty())
      reader.error(where, "field 'param' is empty");
  }
  return arg;
}

ResultDesc readResult(const Reader &reader, const Json &entry,
                      const std::string &where) {
  if (!entry.is_object())
    reader.error(where, "must be an object, got " + entry.dump());
  ResultDesc result;
  result.index = reader.integer(entry, "index", where);
  std::string role = reader.string(entry, "role", where);
  if (role == "loss")
    result.role = ResultRole::Loss;
  else if (role == "param_out")
    result.role = ResultRole::ParamOut;
  else if (role == "opt_state_out")
    result.role = ResultRole::OptStateOut;
  else
    reader.error(where, "unknown result role '" + role +
                            "' (known: loss, param_out, opt_state_out)");
  if (result.role == ResultRole::Loss) {
    if (entry.contains("name"))
      result.name = reader.string(entry, "name", where);
    if (!result.name.empty())
      reader.error(where, "the loss has no name, got '" + result.name + "'");
  } else {
    result.name = reader.string(entry, "name", where);
    if (result.name.empty())
      reader.error(where, "field 'name' is empty");
  }
  result.type = reader.tensorType(entry, where);
  return result;
}

/// Sorts \p items by index and checks that the indices are 0..n-1.
template <typename T>
void orderByIndex(const Reader &reader, std::vector<T> &items,
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
  Reader reader(path);
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
  std::string format = reader.string(json, "format", "");
  if (format != artifactFormat)
    reader.error("", "format '" + format + "' is not '" + artifactFormat + "'");
  int64_t version = reader.integer(json, "version", "");
  if (version != artifactVersion)
    reader.error("", "version " + std::to_string(version) +
                         " is not supported (this runtime reads version " +
                         std::to_string(artifactVersion) + ")");
  manifest.library = reader.string(json, "library", "");
  if (manifest.library.empty())
    reader.error("", "field 'library' is empty");
  manifest.entry = reader.string(json, "entry", "");
  if (manifest.entry.empty())
    reader.error("", "field 'entry' is empty");
  manifest.signature = reader.string(json, "signature", "");
  manifest.ranks = reader.integer(json, "ranks", "");
  if (manifest.ranks < 1)
    reader.error("", "ranks " + std::to_string(manifest.ranks) +
                         " must be at least 1");

  if (auto module = json.find("module"); module != json.end()) {
    if (!module->is_object())
      reader.error("module", "must be an object of strings");
    for (auto &[key, value] : module->items()) {
      if (!value.is_string())
        reader.error("module", "attribute '" + key +
                                   "' must be a string, got " + value.dump());
      manifest.module.emplace_back(key, value.get<std::string>());
    }
  }
  if (auto units = json.find("units"); units != json.end()) {
    if (!units->is_array())
      reader.error("units", "must be a list");
    manifest.numUnits = units->size();
  }

  const Json &arguments = reader.field(json, "arguments", "");
  if (!arguments.is_array())
    reader.error("arguments", "must be a list");
  for (size_t i = 0; i < arguments.size(); ++i)
    manifest.arguments.push_back(readArgument(
        reader, arguments[i], describe("arguments", i, arguments[i])));
  const Json &results = reader.field(json, "results", "");
  if (!results.is_array())
    reader.error("results", "must be a list");
  for (size_t i = 0; i < results.size(); ++i)
    manifest.results.push_back(
        readResult(reader, results[i], describe("results", i, results[i])));
  orderByIndex(reader, manifest.arguments, "arguments");
  orderByIndex(reader, manifest.results, "results");

  checkManifestRoles(manifest);
  checkManifestSignature(manifest);
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
  std::string path = dir + "/manifest.json";
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

const char *zshard::rt::roleName(ArgRole role) {
  switch (role) {
  case ArgRole::Param:
    return "param";
  case ArgRole::OptState:
    return "opt_state";
  case ArgRole::Batch:
    return "batch";
  case ArgRole::Hyper:
    return "hyper";
  }
  return "?";
}

const char *zshard::rt::roleName(ResultRole role) {
  switch (role) {
  case ResultRole::Loss:
    return "loss";
  case ResultRole::ParamOut:
    return "param_out";
  case ResultRole::OptStateOut:
    return "opt_state_out";
  }
  return "?";
}
