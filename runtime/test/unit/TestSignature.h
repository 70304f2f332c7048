//===- TestSignature.h - manifest signatures for tests ----------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The signature of a JSON manifest, computed from its arguments and results
// as docs/runtime.md defines it, written here independently of the runtime's
// own code so tests check one against the other.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TEST_UNIT_TESTSIGNATURE_H
#define ZSHARD_RUNTIME_TEST_UNIT_TESTSIGNATURE_H

#include "zshard/abi/Fnv1a.h"

#include <nlohmann/json.hpp>

#include <string>

namespace zshard::rt::test {

/// FNV-1a 64 of `role:name:dtype:dims;` per argument, `->`, then per result.
inline std::string manifestSignature(const nlohmann::json &m) {
  auto entry = [](const nlohmann::json &e) {
    std::string out = e["role"].get<std::string>() + ":" +
                      (e.contains("name") ? e["name"].get<std::string>() : "") +
                      ":" + e["dtype"].get<std::string>() + ":";
    for (size_t i = 0; i < e["shape"].size(); ++i)
      out += (i ? "x" : "") + std::to_string(e["shape"][i].get<int64_t>());
    return out + ";";
  };
  std::string text;
  for (const nlohmann::json &a : m["arguments"])
    text += entry(a);
  text += "->";
  for (const nlohmann::json &r : m["results"])
    text += entry(r);
  return zshard_abi::hex16(zshard_abi::fnv1a64(text));
}

} // namespace zshard::rt::test

#endif // ZSHARD_RUNTIME_TEST_UNIT_TESTSIGNATURE_H
