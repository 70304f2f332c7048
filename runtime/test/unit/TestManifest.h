//===- TestManifest.h - Manifests for tests ---------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Builds a valid Manifest for a step with the given params and batch
/// arguments (a param_out per param, a loss and the hyper lr), through the
/// real parser, with the signature computed here.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TEST_UNIT_TESTMANIFEST_H
#define ZSHARD_RUNTIME_TEST_UNIT_TESTMANIFEST_H

#include "step/Manifest.h"
#include "zshard/abi/Fnv1a.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace zshard::rt::test {

struct TestTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
};

inline Manifest makeManifest(const std::vector<TestTensor> &params,
                             const std::vector<TestTensor> &batch) {
  using Json = nlohmann::ordered_json;
  Json arguments = Json::array(), results = Json::array();
  std::string text, resultText;
  auto entry = [](const char *role, const std::string &name,
                  const std::string &dtype, const std::vector<int64_t> &shape) {
    std::string out = std::string(role) + ":" + name + ":" + dtype + ":";
    for (size_t i = 0; i < shape.size(); ++i)
      out += (i ? "x" : "") + std::to_string(shape[i]);
    return out + ";";
  };
  results.push_back({{"index", 0},
                     {"role", "loss"},
                     {"dtype", "f32"},
                     {"shape", Json::array()}});
  resultText += entry("loss", "", "f32", {});
  for (const TestTensor &p : params) {
    arguments.push_back({{"index", arguments.size()},
                         {"role", "param"},
                         {"name", p.name},
                         {"dtype", p.dtype},
                         {"shape", p.shape},
                         {"init", "zeros"}});
    text += entry("param", p.name, p.dtype, p.shape);
    results.push_back({{"index", results.size()},
                       {"role", "param_out"},
                       {"name", p.name},
                       {"dtype", p.dtype},
                       {"shape", p.shape}});
    resultText += entry("param_out", p.name, p.dtype, p.shape);
  }
  for (const TestTensor &b : batch) {
    arguments.push_back({{"index", arguments.size()},
                         {"role", "batch"},
                         {"name", b.name},
                         {"dtype", b.dtype},
                         {"shape", b.shape}});
    text += entry("batch", b.name, b.dtype, b.shape);
  }
  arguments.push_back({{"index", arguments.size()},
                       {"role", "hyper"},
                       {"name", "lr"},
                       {"dtype", "f32"},
                       {"shape", Json::array()}});
  text += entry("hyper", "lr", "f32", {});
  Json manifest = {{"format", "zshard-artifact"},
                   {"version", 2},
                   {"library", "step.so"},
                   {"entry", "zshard_step"},
                   {"signature", zshard_abi::hex16(zshard_abi::fnv1a64(
                                     text + "->" + resultText))},
                   {"ranks", 1},
                   {"arguments", arguments},
                   {"results", results}};
  return parseManifest(manifest.dump(), "test.zsa/manifest.json", "test.zsa");
}

/// A GPT-like step: wte [vocab, 4], tokens and targets i32 [batch, length].
inline Manifest gptManifest(int64_t vocab, int64_t batch, int64_t length) {
  return makeManifest({{"wte", "f32", {vocab, 4}}},
                      {{"tokens", "i32", {batch, length}},
                       {"targets", "i32", {batch, length}}});
}

} // namespace zshard::rt::test

#endif // ZSHARD_RUNTIME_TEST_UNIT_TESTMANIFEST_H
