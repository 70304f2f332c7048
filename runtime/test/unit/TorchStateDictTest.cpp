//===- TorchStateDictTest.cpp - Tests of torch state_dict files -----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/TorchStateDict.h"

#include "io/Safetensors.h"
#include "zshard/abi/Fnv1a.h"
#include "zshard/runtime/zshard_rt.h"

#include "TestFiles.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>

using namespace zshard::rt;
using namespace zshard::rt::test;
using Json = nlohmann::ordered_json;

namespace {

/// A step with a param w [2, 3] of \p wType and an f32 param b [3], whose
/// module records \p record as zshard.torch_state_dict (none when null).
Manifest manifestWith(const Json &record, const std::string &wType = "bf16") {
  Json args = Json::array(), results = Json::array();
  for (auto [name, dtype, shape] :
       {std::tuple{"w", wType.c_str(), std::vector<int64_t>{2, 3}},
        std::tuple{"b", "f32", std::vector<int64_t>{3}}}) {
    args.push_back({{"index", args.size()},
                    {"role", "param"},
                    {"name", name},
                    {"dtype", dtype},
                    {"shape", shape},
                    {"init", "normal(0, 1)"}});
    results.push_back({{"index", results.size() + 1},
                       {"role", "param_out"},
                       {"name", name},
                       {"dtype", dtype},
                       {"shape", shape}});
  }
  results.push_back({{"index", 0},
                     {"role", "loss"},
                     {"dtype", "f32"},
                     {"shape", Json::array()}});
  std::string text = "param:w:" + wType +
                     ":2x3;param:b:f32:3;->loss::f32:;"
                     "param_out:w:" +
                     wType + ":2x3;param_out:b:f32:3;";
  Json m = {{"format", "zshard-artifact"},
            {"version", 2},
            {"library", "step.so"},
            {"entry", "zshard_step"},
            {"signature", zshard_abi::hex16(zshard_abi::fnv1a64(text))},
            {"ranks", 1},
            {"arguments", args},
            {"results", results}};
  if (!record.is_null())
    m["module"] = {{torchStateDictAttr, record.dump()}};
  return parseManifest(m.dump(), "m.zsa/manifest.json", "m.zsa");
}

/// The state_dict of a torch module with w, a tied "head" (w under another
/// name, as lm_head.weight), b and a persistent buffer k = [0.5, 2] (F32).
Json record() {
  return Json::array(
      {{{"name", "w"}, {"dtype", "F32"}, {"shape", {2, 3}}, {"param", "w"}},
       {{"name", "head"}, {"dtype", "F32"}, {"shape", {2, 3}}, {"param", "w"}},
       {{"name", "b"}, {"dtype", "F32"}, {"shape", {3}}, {"param", "b"}},
       {{"name", "k"},
        {"dtype", "F32"},
        {"shape", {2}},
        {"data", "0000003f00000040"}}});
}

std::vector<float> floatsOf(const TensorView &t) {
  std::vector<float> out(t.elements);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = float(loadAsDouble(t.dtype, t.data, i));
  return out;
}

class TorchStateDictTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  }
  void TearDown() override { zshard_rt_mem_ctx_destroy(ctx); }

  /// Writes \p tensors (f32) to \p path.
  static void writeF32(
      const std::string &path,
      const std::vector<std::pair<std::string, std::vector<float>>> &tensors,
      const std::vector<std::vector<int64_t>> &shapes) {
    std::vector<TensorToWrite> out;
    for (size_t i = 0; i < tensors.size(); ++i)
      out.push_back(
          {tensors[i].first, DType::F32, shapes[i], tensors[i].second.data()});
    writeSafetensors(path, out, {});
  }

  zshard_rt_mem_ctx *ctx = nullptr;
};

} // namespace

// Tests that --save-torch writes every state_dict key in order: the bf16
// param widened to the key's F32, the tied key equal to it, the buffer's
// recorded bytes, "format": "pt".
TEST_F(TorchStateDictTest, SaveWritesTheStateDict) {
  TempDir dir;
  Manifest manifest = manifestWith(record());
  StepBuffers buffers(manifest, ctx);
  initFromSpecs(manifest, buffers, 3);
  saveTorchState(manifest, buffers, {}, dir.file("t.safetensors"), 7);
  SafetensorsFile file = SafetensorsFile::read(dir.file("t.safetensors"));
  verifyChecksum(file);
  std::vector<std::string> names;
  for (const TensorView &t : file.tensors()) {
    names.push_back(t.name);
    EXPECT_EQ(t.dtype, DType::F32) << t.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"w", "head", "b", "k"}));
  std::vector<float> w(6);
  for (size_t i = 0; i < 6; ++i)
    w[i] = float(loadAsDouble(DType::BF16, buffers.argument(0), i));
  EXPECT_EQ(floatsOf(*file.find("w")), w);
  EXPECT_EQ(floatsOf(*file.find("head")), w);
  EXPECT_EQ(floatsOf(*file.find("k")), (std::vector<float>{0.5f, 2.0f}));
  EXPECT_EQ(*file.findMetadata("format"), "pt");
  EXPECT_EQ(*file.findMetadata("step"), "7");
}

// Tests that a step without a record writes its params under their names in
// their dtypes.
TEST_F(TorchStateDictTest, WithoutARecordTheParams) {
  std::vector<TorchEntry> entries = torchStateDict(manifestWith(nullptr));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "w");
  EXPECT_EQ(entries[0].dtype, DType::BF16);
  EXPECT_EQ(entries[1].name, "b");
  EXPECT_FALSE(entries[1].isTied());
}

// Tests --init-from of a state_dict file: the param read from its tied key
// when it is missing; both keys equal; the buffer with its values. And the
// refusals: a tied key of another shape or values, a changed buffer.
TEST_F(TorchStateDictTest, LoadAcceptsTiedKeysAndBuffers) {
  TempDir dir;
  Manifest manifest = manifestWith(record(), "f32");
  StepBuffers buffers(manifest, ctx);
  std::vector<float> w = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9}, k = {0.5f, 2};
  std::string path = dir.file("p.safetensors");
  writeF32(path, {{"head", w}, {"b", b}, {"k", k}}, {{2, 3}, {3}, {2}});
  loadState(manifest, buffers, path, StateFile::Parameters, 0);
  for (size_t i = 0; i < 6; ++i)
    EXPECT_EQ(loadAsDouble(DType::F32, buffers.argument(0), i), w[i]);

  writeF32(path, {{"w", w}, {"head", w}, {"b", b}}, {{2, 3}, {2, 3}, {3}});
  loadState(manifest, buffers, path, StateFile::Parameters, 0);

  std::vector<float> other = {1, 2, 3, 4, 5, 7};
  writeF32(path, {{"w", w}, {"head", other}, {"b", b}}, {{2, 3}, {2, 3}, {3}});
  EXPECT_EQ(failureOf([&] {
              loadState(manifest, buffers, path, StateFile::Parameters, 0);
            }),
            path + ": tensor 'head' differs from 'w', which it is tied to "
                   "(the step holds one tensor for both)");
  writeF32(path, {{"head", w}, {"b", b}}, {{3, 2}, {3}});
  EXPECT_EQ(failureOf([&] {
              loadState(manifest, buffers, path, StateFile::Parameters, 0);
            }),
            path + ": tensor 'head' has shape [3, 2], but tied weight 'head' "
                   "(f32 [2, 3]) does not");
  writeF32(path, {{"w", w}, {"b", b}, {"k", {0.5f, 3}}}, {{2, 3}, {3}, {2}});
  EXPECT_EQ(failureOf([&] {
              loadState(manifest, buffers, path, StateFile::Parameters, 0);
            }),
            path + ": tensor 'k' holds other values than buffer 'k' (f32 "
                   "[2]), which is folded into the step (re-export the model "
                   "with them)");
  writeF32(path, {{"b", b}}, {{3}});
  EXPECT_EQ(failureOf([&] {
              loadState(manifest, buffers, path, StateFile::Parameters, 0);
            }),
            path + ": no tensor for param 'w' (f32 [2, 3])");
}

// Tests every problem of a recorded state_dict: one line naming the
// attribute.
TEST_F(TorchStateDictTest, BadRecords) {
  const std::string prefix =
      "the artifact's module attribute zshard.torch_state_dict: ";
  const std::string suffix = " (re-export the model with zshard-export)";
  auto problem = [&](const Json &rec) {
    return failureOf([&] { torchStateDict(manifestWith(rec)); });
  };
  EXPECT_EQ(problem(Json::object()), prefix + "not a JSON list" + suffix);
  EXPECT_EQ(problem(Json::array({{{"name", "w"}}})),
            prefix + "an entry without name, dtype and shape" + suffix);
  EXPECT_EQ(problem(Json::array(
                {{{"name", "w"}, {"dtype", "X"}, {"shape", {2, 3}}}})),
            prefix + "'w': unknown dtype 'X'" + suffix);
  EXPECT_EQ(problem(Json::array(
                {{{"name", "w"}, {"dtype", "F32"}, {"shape", {-1}}}})),
            prefix + "'w': bad shape" + suffix);
  EXPECT_EQ(problem(Json::array({{{"name", "w"},
                                  {"dtype", "F32"},
                                  {"shape", {2, 3}},
                                  {"param", 3}}})),
            prefix + "'w': param is not a string" + suffix);
  EXPECT_EQ(problem(Json::array({{{"name", "h"},
                                  {"dtype", "F32"},
                                  {"shape", {2, 3}},
                                  {"param", "v"}}})),
            prefix + "'h' is held by param 'v', which the step does not have" +
                suffix);
  EXPECT_EQ(
      problem(Json::array(
          {{{"name", "h"}, {"dtype", "F32"}, {"shape", {6}}, {"param", "w"}}})),
      prefix + "'h' has shape [6], and its param 'w' [2, 3]" + suffix);
  EXPECT_EQ(
      problem(Json::array({{{"name", "k"}, {"dtype", "F32"}, {"shape", {2}}}})),
      prefix + "'k' has neither a param nor data" + suffix);
  EXPECT_EQ(problem(Json::array({{{"name", "k"},
                                  {"dtype", "F32"},
                                  {"shape", {2}},
                                  {"data", "abc"}}})),
            prefix + "buffer 'k': data has an odd number of digits" + suffix);
  EXPECT_EQ(
      problem(Json::array(
          {{{"name", "k"}, {"dtype", "F32"}, {"shape", {2}}, {"data", "zz"}}})),
      prefix + "buffer 'k': data is not hexadecimal" + suffix);
  EXPECT_EQ(problem(Json::array({{{"name", "k"},
                                  {"dtype", "F32"},
                                  {"shape", {2}},
                                  {"data", "00000000"}}})),
            prefix + "buffer 'k': 4 bytes of data for F32 [2]" + suffix);
}
