//===- ManifestReader.h - Typed JSON fields with located errors -*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The field reader Manifest.cpp parses a manifest with: each accessor checks
// a field's presence and type and fails with "<path>: <where>: <problem>".
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_MANIFESTREADER_H
#define ZSHARD_RUNTIME_LIB_STEP_MANIFESTREADER_H

#include "step/Manifest.h"

#include "core/Failure.h"
#include "core/Shape.h"

#include "zshard/abi/ManifestSchema.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace zshard::rt {

/// Field access with messages "<path>: <where>: <problem>".
class ManifestReader {
public:
  using Json = nlohmann::ordered_json;

  explicit ManifestReader(const std::string &path) : path(path) {}

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

  bool boolean(const Json &object, const char *key,
               const std::string &where) const {
    const Json &value = field(object, key, where);
    if (!value.is_boolean())
      error(where, std::string("field '") + key + "' must be true or false, " +
                       "got " + value.dump());
    return value.get<bool>();
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

  DType dtype(const Json &object, const char *key,
              const std::string &where) const {
    std::string name = string(object, key, where);
    auto parsed = parseManifestDType(name);
    if (!parsed)
      error(where, "unknown dtype '" + name +
                       "' (known: " + manifestDTypeList() + ")");
    return *parsed;
  }

  /// A list of integers >= \p minimum.
  std::vector<int64_t> integers(const Json &object, const char *key,
                                const std::string &where,
                                int64_t minimum) const {
    const Json &value = field(object, key, where);
    auto bad = [&] {
      error(where, std::string("field '") + key +
                       "' must be a list of integers >= " +
                       std::to_string(minimum) + ", got " + value.dump());
    };
    if (!value.is_array())
      bad();
    std::vector<int64_t> out;
    for (const Json &item : value) {
      if (!item.is_number_integer() ||
          (item.is_number_unsigned() && item.get<uint64_t>() > INT64_MAX) ||
          item.get<int64_t>() < minimum)
        bad();
      out.push_back(item.get<int64_t>());
    }
    return out;
  }

  TensorType tensorType(const Json &object, const std::string &where) const {
    TensorType type;
    std::string dtype = string(object, zshard_abi::manifest::kDType, where);
    auto parsed = parseManifestDType(dtype);
    if (!parsed)
      error(where, "unknown dtype '" + dtype +
                       "' (known: " + manifestDTypeList() + ")");
    type.dtype = *parsed;
    const Json &shape = field(object, zshard_abi::manifest::kShape, where);
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

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_MANIFESTREADER_H
