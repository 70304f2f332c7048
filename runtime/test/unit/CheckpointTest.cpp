//===- CheckpointTest.cpp - Tests of step state init, load and save -------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/Checkpoint.h"

#include "io/Safetensors.h"
#include "zshard/abi/Fnv1a.h"

#include "TestFiles.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>

using namespace zshard::rt;
using namespace zshard::rt::test;
using Json = nlohmann::ordered_json;

namespace {

/// A mixed-precision step: bf16 param w [2, 3] with an f32 master copy
/// (init "param") and an f32 exp_avg (zeros), and an f32 bias b [3].
Manifest mixedManifest() {
  Json args = Json::array(), results = Json::array();
  auto add = [](Json &list, Json entry) {
    entry["index"] = list.size();
    list.push_back(entry);
  };
  add(args, {{"role", "param"},
             {"name", "w"},
             {"dtype", "bf16"},
             {"shape", {2, 3}},
             {"init", "normal(0, 1)"}});
  add(args, {{"role", "opt_state"},
             {"name", "w.master"},
             {"param", "w"},
             {"dtype", "f32"},
             {"shape", {2, 3}},
             {"init", "param"}});
  add(args, {{"role", "opt_state"},
             {"name", "w.exp_avg"},
             {"param", "w"},
             {"dtype", "f32"},
             {"shape", {2, 3}},
             {"init", "zeros"}});
  add(args, {{"role", "param"},
             {"name", "b"},
             {"dtype", "f32"},
             {"shape", {3}},
             {"init", "ones"}});
  add(results, {{"role", "loss"}, {"dtype", "f32"}, {"shape", Json::array()}});
  add(results, {{"role", "param_out"},
                {"name", "w"},
                {"dtype", "bf16"},
                {"shape", {2, 3}}});
  add(results, {{"role", "opt_state_out"},
                {"name", "w.master"},
                {"dtype", "f32"},
                {"shape", {2, 3}}});
  add(results, {{"role", "opt_state_out"},
                {"name", "w.exp_avg"},
                {"dtype", "f32"},
                {"shape", {2, 3}}});
  add(results,
      {{"role", "param_out"}, {"name", "b"}, {"dtype", "f32"}, {"shape", {3}}});
  std::string text = "param:w:bf16:2x3;opt_state:w.master:f32:2x3;"
                     "opt_state:w.exp_avg:f32:2x3;param:b:f32:3;->"
                     "loss::f32:;param_out:w:bf16:2x3;"
                     "opt_state_out:w.master:f32:2x3;"
                     "opt_state_out:w.exp_avg:f32:2x3;param_out:b:f32:3;";
  Json m = {{"format", "zshard-artifact"},
            {"version", 2},
            {"library", "step.so"},
            {"entry", "zshard_step"},
            {"signature", zshard_abi::hex16(zshard_abi::fnv1a64(text))},
            {"ranks", 1},
            {"arguments", args},
            {"results", results}};
  return parseManifest(m.dump(), "m.zsa/manifest.json", "m.zsa");
}

class CheckpointTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  }
  void TearDown() override { zshard_rt_mem_ctx_destroy(ctx); }

  std::vector<float> floats(StepBuffers &buffers, size_t index, size_t n) {
    std::vector<float> out(n);
    std::memcpy(out.data(), buffers.argument(index), n * 4);
    return out;
  }
  std::vector<float> wideW(StepBuffers &buffers) {
    std::vector<float> out(6);
    for (size_t i = 0; i < 6; ++i)
      out[i] = float(loadAsDouble(DType::BF16, buffers.argument(0), i));
    return out;
  }

  zshard_rt_mem_ctx *ctx = nullptr;
};

} // namespace

// Tests init from specs: the master copy equals the (bf16) parameter widened,
// and the buffers are charged to their categories.
TEST_F(CheckpointTest, InitFromSpecsCopiesParameters) {
  Manifest manifest = mixedManifest();
  StepBuffers buffers(manifest, ctx);
  initFromSpecs(manifest, buffers, 4);
  std::vector<float> w = wideW(buffers);
  EXPECT_NE(w, std::vector<float>(6, 0.0f));
  EXPECT_EQ(floats(buffers, 1, 6), w);
  EXPECT_EQ(floats(buffers, 2, 6), std::vector<float>(6, 0.0f));
  EXPECT_EQ(floats(buffers, 3, 3), std::vector<float>(3, 1.0f));
  uint64_t params = 0, state = 0, other = 0;
  zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_PARAMETERS, &params);
  zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_OPTIMIZER_STATE, &state);
  zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_OTHER, &other);
  EXPECT_EQ(params, 2u * (12 + 12)); // w and b, arguments and results
  EXPECT_EQ(state, 2u * (24 + 24));
  EXPECT_EQ(other, 4u); // the loss
}

// Tests save, then load as a checkpoint and as parameters: the file holds
// every state tensor in its dtype and the step; a parameter file without
// optimizer state starts it from the init specs (the master from the loaded
// parameter).
TEST_F(CheckpointTest, SaveAndLoad) {
  TempDir dir;
  Manifest manifest = mixedManifest();
  StepBuffers saved(manifest, ctx);
  initFromSpecs(manifest, saved, 1);
  saveState(manifest, saved, dir.file("c.safetensors"), 41);
  SafetensorsFile file = SafetensorsFile::read(dir.file("c.safetensors"));
  ASSERT_EQ(file.tensors().size(), 4u);
  EXPECT_EQ(file.tensors()[0].name, "w");
  EXPECT_EQ(file.tensors()[0].dtype, DType::BF16);
  EXPECT_EQ(file.tensors()[1].name, "b");
  EXPECT_EQ(*file.findMetadata("step"), "41");
  EXPECT_EQ(file.findMetadata("model"), nullptr);

  StepBuffers loaded(manifest, ctx);
  EXPECT_EQ(loadState(manifest, loaded, dir.file("c.safetensors"),
                      StateFile::Checkpoint, 99),
            41);
  EXPECT_EQ(wideW(loaded), wideW(saved));
  EXPECT_EQ(floats(loaded, 1, 6), floats(saved, 1, 6));

  std::vector<float> w = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9};
  writeSafetensors(
      dir.file("p.safetensors"),
      {{"w", DType::F32, {2, 3}, w.data()}, {"b", DType::F32, {3}, b.data()}},
      {});
  EXPECT_EQ(failureOf([&] {
              loadState(manifest, loaded, dir.file("p.safetensors"),
                        StateFile::Parameters, 0);
            }),
            dir.file("p.safetensors") +
                ": tensor 'w' is F32, which cannot be read as param 'w' (bf16 "
                "[2, 3])");
  std::vector<uint16_t> wb(6);
  for (size_t i = 0; i < 6; ++i)
    wb[i] = floatToBf16(w[i]);
  writeSafetensors(
      dir.file("p.safetensors"),
      {{"w", DType::BF16, {2, 3}, wb.data()}, {"b", DType::F32, {3}, b.data()}},
      {});
  EXPECT_EQ(loadState(manifest, loaded, dir.file("p.safetensors"),
                      StateFile::Parameters, 0),
            0);
  EXPECT_EQ(floats(loaded, 1, 6), w);
  EXPECT_EQ(floats(loaded, 2, 6), std::vector<float>(6, 0.0f));
  EXPECT_EQ(floats(loaded, 3, 3), b);
  EXPECT_EQ(failureOf([&] {
              loadState(manifest, loaded, dir.file("p.safetensors"),
                        StateFile::Checkpoint, 0);
            }),
            dir.file("p.safetensors") +
                ": no tensor for opt_state 'w.master' (f32 [2, 3]) (a --resume "
                "file holds every param and opt_state)");
}

// Tests that "param" is refused as the init of a parameter.
TEST(CheckpointManifestTest, ParamInitIsForOptimizerStateOnly) {
  EXPECT_EQ(failureOf([] {
              Json m = {{"format", "zshard-artifact"},
                        {"version", 2},
                        {"library", "s.so"},
                        {"entry", "e"},
                        {"signature", "0000000000000000"},
                        {"ranks", 1},
                        {"arguments",
                         {{{"index", 0},
                           {"role", "param"},
                           {"name", "w"},
                           {"dtype", "f32"},
                           {"shape", {2}},
                           {"init", "param"}}}},
                        {"results", Json::array()}};
              parseManifest(m.dump(), "m.json", ".");
            }),
            "m.json: arguments[0] ('w'): init spec 'param' is for opt_state "
            "arguments only");
}
