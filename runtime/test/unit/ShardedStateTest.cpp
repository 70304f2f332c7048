//===- ShardedStateTest.cpp - Tests of sharded manifests and state --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The sharded half of the manifest (grid, units, shard roles) and of the
// step state: every rank's shards initialise to the slices of the unsharded
// init, consolidated files load piecewise into any rank count and are
// assembled back, rank files round-trip and refuse other layouts.
//
//===----------------------------------------------------------------------===//

#include "step/Checkpoint.h"

#include "core/Failure.h"
#include "core/InitSpec.h"
#include "io/Safetensors.h"
#include "zshard/abi/Fnv1a.h"

#include "TestFiles.h"
#include "TestSignature.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <functional>

using namespace zshard::rt;
using namespace zshard::rt::test;
using Json = nlohmann::ordered_json;

namespace {

/// The signature of manifest \p m.
std::string signatureOf(const Json &m) {
  return zshard::rt::test::manifestSignature(m);
}

/// A mixed-precision sharded step on \p ranks ranks: unit "h.0"
/// (full_shard, bf16) holds w [2, 3] (normal) at 0 and b [4] (uniform) at
/// 7 in 12 padded elements (shards of 12 / ranks), with slots master (f32,
/// init param) and exp_avg (f32, zeros for w, ones for b); unit "ln"
/// (no_shard) is the param ln.g [3] (ones) with an opt_state exp_avg.
Json shardedJson(int ranks) {
  int64_t shard = 12 / ranks;
  Json args = Json::array(), results = Json::array();
  auto add = [](Json &list, Json entry) {
    entry["index"] = list.size();
    list.push_back(entry);
  };
  add(args, {{"role", "param_shard"},
             {"name", "h.0"},
             {"unit", "h.0"},
             {"dtype", "bf16"},
             {"shape", {shard}}});
  add(args, {{"role", "opt_state_shard"},
             {"name", "h.0.master"},
             {"unit", "h.0"},
             {"slot", "master"},
             {"dtype", "f32"},
             {"shape", {shard}}});
  add(args, {{"role", "opt_state_shard"},
             {"name", "h.0.exp_avg"},
             {"unit", "h.0"},
             {"slot", "exp_avg"},
             {"dtype", "f32"},
             {"shape", {shard}}});
  add(args, {{"role", "param"},
             {"name", "ln.g"},
             {"dtype", "f32"},
             {"shape", {3}},
             {"init", "ones"}});
  add(args, {{"role", "opt_state"},
             {"name", "ln.g.exp_avg"},
             {"param", "ln.g"},
             {"dtype", "f32"},
             {"shape", {3}},
             {"init", "zeros"}});
  add(args, {{"role", "hyper"},
             {"name", "lr"},
             {"dtype", "f32"},
             {"shape", Json::array()}});
  add(results, {{"role", "loss"}, {"dtype", "f32"}, {"shape", Json::array()}});
  for (const Json &a : args) {
    std::string role = a["role"];
    if (role == "hyper")
      continue;
    add(results, {{"role", role + "_out"},
                  {"name", a["name"]},
                  {"dtype", a["dtype"]},
                  {"shape", a["shape"]}});
  }
  Json units = {
      {{"name", "h.0"},
       {"strategy", "full_shard"},
       {"shard_axes", {0}},
       {"replicate_axes", Json::array()},
       {"padded", 12},
       {"shard_size", shard},
       {"param_dtype", "bf16"},
       {"reduce_dtype", "f32"},
       {"members",
        {{{"name", "h.0.w"},
          {"shape", {2, 3}},
          {"offset", 0},
          {"init", "normal(0, 1)"}},
         {{"name", "h.0.b"},
          {"shape", {4}},
          {"offset", 7},
          {"init", "uniform(-1, 1)"}}}},
       {"slots",
        {{{"slot", "master"}, {"dtype", "f32"}, {"inits", {"param", "param"}}},
         {{"slot", "exp_avg"},
          {"dtype", "f32"},
          {"inits", {"zeros", "ones"}}}}}},
      {{"name", "ln"},
       {"strategy", "no_shard"},
       {"shard_axes", Json::array()},
       {"replicate_axes", {0}},
       {"padded", 3},
       {"shard_size", 3},
       {"param_dtype", "f32"},
       {"members",
        {{{"name", "ln.g"}, {"shape", {3}}, {"offset", 0}, {"init", "ones"}}}},
       {"slots",
        {{{"slot", "exp_avg"}, {"dtype", "f32"}, {"inits", {"zeros"}}}}}}};
  Json m = {{"format", "zshard-artifact"},
            {"version", 2},
            {"library", "step.so"},
            {"entry", "zshard_step"},
            {"signature", ""},
            {"ranks", ranks},
            {"grid", {{"name", "world"}, {"shape", {ranks}}}},
            {"arguments", args},
            {"results", results},
            {"units", units}};
  m["signature"] = signatureOf(m);
  return m;
}

Manifest parse(const Json &m) {
  return parseManifest(m.dump(), "s.zsa/manifest.json", "s.zsa");
}

/// The error after \p edit of the 3-rank manifest (signature recomputed).
std::string errorAfter(const std::function<void(Json &)> &edit) {
  Json m = shardedJson(3);
  edit(m);
  m["signature"] = signatureOf(m);
  return failureOf([&] { parse(m); });
}

const std::string at = "s.zsa/manifest.json: ";

class ShardedStateTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  }
  void TearDown() override { zshard_rt_mem_ctx_destroy(ctx); }

  /// Element i of argument \p index as a double.
  static double valueAt(const Manifest &m, StepBuffers &buffers, size_t index,
                        uint64_t i) {
    return loadAsDouble(m.arguments[index].type.dtype, buffers.argument(index),
                        i);
  }

  zshard_rt_mem_ctx *ctx = nullptr;
};

/// The unsharded init of member \p name (of \p dtype) under \p seed.
std::vector<double> wholeInit(const std::string &name, const char *spec,
                              DType dtype, uint64_t count, uint64_t seed) {
  std::vector<unsigned char> bytes(count * dtypeSize(dtype));
  initTensor(parseInitSpec(spec), name, seed, dtype, 0, count, bytes.data());
  std::vector<double> out(count);
  for (uint64_t i = 0; i < count; ++i)
    out[i] = loadAsDouble(dtype, bytes.data(), i);
  return out;
}

} // namespace

// Tests that a sharded manifest is read: grid, units, members, slots, the
// shard roles, the model's parameters, and where each rank sits.
TEST(ShardedManifestTest, ReadsASharded) {
  Manifest m = parse(shardedJson(3));
  EXPECT_TRUE(m.sharded());
  EXPECT_EQ(m.ranks, 3);
  EXPECT_EQ(m.grid->name, "world");
  EXPECT_EQ(m.grid->shape, std::vector<int64_t>{3});
  ASSERT_EQ(m.units.size(), 2u);
  const UnitDesc &unit = m.units[0];
  EXPECT_EQ(unit.strategy, ShardStrategy::FullShard);
  EXPECT_TRUE(unit.sharded());
  EXPECT_FALSE(m.units[1].sharded());
  EXPECT_EQ(unit.padded, 12u);
  EXPECT_EQ(unit.shardSize, 4u);
  EXPECT_EQ(unit.paramDType, DType::BF16);
  ASSERT_EQ(unit.members.size(), 2u);
  EXPECT_EQ(unit.members[1].offset, 7u);
  EXPECT_EQ(unit.members[1].elements, 4u);
  ASSERT_EQ(unit.slots.size(), 2u);
  EXPECT_EQ(unit.slots[1].inits[1].kind, InitSpec::Kind::Ones);
  EXPECT_EQ(m.arguments[0].role, ArgRole::ParamShard);
  EXPECT_EQ(m.arguments[2].slot, "exp_avg");
  EXPECT_EQ(m.results[1].role, ResultRole::ParamShardOut);
  EXPECT_EQ(m.results[1].argument, 0);
  std::vector<std::string> params;
  for (const auto &[name, shape] : m.modelParams())
    params.push_back(*name);
  EXPECT_EQ(params, (std::vector<std::string>{"h.0.w", "h.0.b", "ln.g"}));
  EXPECT_EQ(gridCoords(5, {2, 3}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(shardIndex(unit, *m.grid, {2}), 2u);
  // Unsharded manifests have no grid ("grid": null or absent).
  Json plain = shardedJson(1);
  plain["grid"] = nullptr;
  plain["units"] = Json::array();
  plain["arguments"] = {plain["arguments"][3], plain["arguments"][4],
                        plain["arguments"][5]};
  for (size_t i = 0; i < 3; ++i)
    plain["arguments"][i]["index"] = i;
  plain["results"] = {plain["results"][0], plain["results"][4],
                      plain["results"][5]};
  for (size_t i = 0; i < 3; ++i)
    plain["results"][i]["index"] = i;
  plain["signature"] = signatureOf(plain);
  EXPECT_FALSE(parse(plain).sharded());
}

// Tests every rule of the grid and the units.
TEST(ShardedManifestTest, GridAndUnitErrors) {
  EXPECT_EQ(errorAfter([](Json &m) { m["ranks"] = 4; }),
            at + "ranks 4 is not the number of ranks of grid 'world' [3] (3)");
  EXPECT_EQ(errorAfter([](Json &m) { m["grid"] = nullptr; }),
            at + "ranks 3 needs a grid (\"grid\" is null: the artifact is "
                 "single-rank)");
  EXPECT_EQ(errorAfter([](Json &m) { m["grid"]["shape"] = {-1}; }),
            at + "grid: shape [-1] has a dynamic size: this runtime runs "
                 "artifacts compiled for a fixed rank count");
  EXPECT_EQ(errorAfter([](Json &m) { m["grid"]["shape"] = Json::array(); }),
            at + "grid: shape [] must have 1 to 6 axes");
  EXPECT_EQ(errorAfter([](Json &m) { m["grid"] = 3; }),
            at + "grid: must be an object {\"name\", \"shape\"} or null, got "
                 "3");
  EXPECT_EQ(errorAfter([](Json &m) { m["units"][0]["strategy"] = "zero3"; }),
            at + "units[0] ('h.0'): unknown strategy 'zero3' (known: no_shard, "
                 "zero1, shard_grad_op, full_shard, hybrid_shard, "
                 "hybrid_shard_zero2)");
  EXPECT_EQ(errorAfter([](Json &m) { m["units"][0]["shard_axes"] = {1}; }),
            at + "unit 'h.0': axis 1 is not an axis of grid 'world' [3]");
  EXPECT_EQ(errorAfter([](Json &m) { m["units"][0]["replicate_axes"] = {0}; }),
            at + "unit 'h.0': axis 0 appears twice in shard_axes [0] and "
                 "replicate_axes [0]");
  EXPECT_EQ(errorAfter([](Json &m) { m["units"][0]["padded"] = 13; }),
            at + "unit 'h.0': padded 13 is not shard_size 4 times the 3 ranks "
                 "of shard_axes [0]");
  EXPECT_EQ(
      errorAfter([](Json &m) { m["units"][0]["members"][1]["offset"] = 9; }),
      at + "unit 'h.0': member 'h.0.b' at offset 9 with 4 elements ends "
           "past padded 12");
  EXPECT_EQ(
      errorAfter([](Json &m) { m["units"][0]["members"][1]["offset"] = 5; }),
      at + "unit 'h.0': members 'h.0.w' and 'h.0.b' overlap");
  EXPECT_EQ(errorAfter([](Json &m) { m["units"][1]["name"] = "h.0"; }),
            at + "two units are named 'h.0'");
  EXPECT_EQ(
      errorAfter([](Json &m) { m["units"][0]["slots"][1]["slot"] = "master"; }),
      at + "unit 'h.0': two slots are named 'master'");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["units"][0]["slots"][0]["inits"] = {"param"};
            }),
            at + "units[0] ('h.0'): slots[0] ('master'): field 'inits' must "
                 "be a list of 2 init specs, one per member, got [\"param\"]");
  EXPECT_EQ(errorAfter(
                [](Json &m) { m["units"][0]["members"][0]["init"] = "param"; }),
            at + "units[0] ('h.0'): members[0] ('h.0.w'): init spec 'param' "
                 "is for optimizer state only");
  EXPECT_EQ(
      errorAfter([](Json &m) { m["units"][0]["members"][0]["init"] = "one"; }),
      at + "units[0] ('h.0'): members[0] ('h.0.w'): init spec 'one': "
           "expected normal(MEAN, STD), uniform(LOW, HIGH), zeros, ones or "
           "param");
}

// Tests the rules of the shard roles across arguments, results and units.
TEST(ShardedManifestTest, RoleErrors) {
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][0]["unit"] = "h.1"; }),
            at + "param_shard 'h.0' belongs to unit 'h.1', which is not in "
                 "\"units\"");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][0]["unit"] = "ln"; }),
            at + "param_shard 'h.0' belongs to unit 'ln', which is no_shard "
                 "(its parameters and optimizer state are param and opt_state "
                 "arguments)");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["arguments"][0]["shape"] = {5};
              m["results"][1]["shape"] = {5};
            }),
            at + "param_shard 'h.0' is bf16 [5] but unit 'h.0' needs bf16 "
                 "[4]");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["arguments"][1]["dtype"] = "bf16";
              m["results"][2]["dtype"] = "bf16";
            }),
            at + "opt_state_shard 'h.0.master' is bf16 [4] but unit 'h.0' "
                 "needs f32 [4]");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][1]["slot"] = "v"; }),
            at + "opt_state_shard 'h.0.master' names slot 'v', which unit "
                 "'h.0' does not have");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["arguments"][1]["name"] = "h.0.m";
              m["results"][2]["name"] = "h.0.m";
            }),
            at + "opt_state_shard 'h.0.m' must be named 'h.0.master'");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["arguments"][1]["role"] = "hyper";
              m["arguments"][1]["name"] = "step";
              m["arguments"][1]["shape"] = Json::array();
              m["results"].erase(2);
              for (size_t i = 0; i < m["results"].size(); ++i)
                m["results"][i]["index"] = i;
            }),
            at + "unit 'h.0' has no opt_state_shard argument 'h.0.master' for "
                 "its slot 'master'");
  EXPECT_EQ(
      errorAfter([](Json &m) { m["units"][1]["members"][0]["name"] = "ln.h"; }),
      at + "unit 'ln' is no_shard, but its member 'ln.h' is not a param "
           "argument");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["arguments"][3]["name"] = "h.0.w";
              m["arguments"][4]["param"] = "h.0.w";
              m["results"][4]["name"] = "h.0.w";
              m["units"][1]["members"][0]["name"] = "h.0.w";
            }),
            at + "state tensor 'h.0.w' is both param 'h.0.w' and a member of "
                 "unit 'h.0'");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["results"].erase(1);
              for (size_t i = 0; i < m["results"].size(); ++i)
                m["results"][i]["index"] = i;
            }),
            at + "param_shard 'h.0' has no param_shard_out result");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"][1]["name"] = "h.1"; }),
            at + "param_shard_out 'h.1' updates no param_shard argument of "
                 "that name");
}

// Tests that every rank's shards are the slices of the unsharded init (one
// model for every rank count), with zero padding, the master slot a copy of
// the (bf16) parameter and the per-member slot inits.
TEST_F(ShardedStateTest, InitSlicesTheUnshardedModel) {
  std::vector<double> w = wholeInit("h.0.w", "normal(0, 1)", DType::BF16, 6, 7);
  std::vector<double> b =
      wholeInit("h.0.b", "uniform(-1, 1)", DType::BF16, 4, 7);
  std::vector<double> flat(12, 0.0), slot(12, 0.0);
  for (size_t i = 0; i < 6; ++i)
    flat[i] = w[i];
  for (size_t i = 0; i < 4; ++i) {
    flat[7 + i] = b[i];
    slot[7 + i] = 1.0;
  }
  for (int ranks : {1, 2, 3, 4, 6}) {
    Manifest m = parse(shardedJson(ranks));
    uint64_t shard = 12 / uint64_t(ranks);
    for (int r = 0; r < ranks; ++r) {
      SCOPED_TRACE(std::to_string(r) + " of " + std::to_string(ranks));
      StepBuffers buffers(m, ctx);
      initFromSpecs(m, buffers, 7, RankPlace::of(m, r));
      for (uint64_t i = 0; i < shard; ++i) {
        uint64_t g = uint64_t(r) * shard + i;
        EXPECT_EQ(valueAt(m, buffers, 0, i), flat[g]) << g;
        EXPECT_EQ(valueAt(m, buffers, 1, i), flat[g]) << g;
        EXPECT_EQ(valueAt(m, buffers, 2, i), slot[g]) << g;
      }
      EXPECT_EQ(valueAt(m, buffers, 3, 2), 1.0);
    }
  }
}

// Tests a hybrid grid [2, 2] whose unit is sharded over axis 1 and
// replicated over axis 0: ranks in one column hold the same shard, the one
// of their coordinate on axis 1.
TEST_F(ShardedStateTest, HybridGridShardsOverItsShardAxes) {
  Json json = shardedJson(2);
  json["ranks"] = 4;
  json["grid"]["shape"] = {2, 2};
  json["units"][0]["shard_axes"] = {1};
  json["units"][0]["replicate_axes"] = {0};
  json["units"][1]["replicate_axes"] = {0, 1};
  Manifest m = parse(json);
  std::vector<std::vector<double>> shards;
  for (int r = 0; r < 4; ++r) {
    StepBuffers buffers(m, ctx);
    RankPlace place = RankPlace::of(m, r);
    EXPECT_EQ(place.coords, (std::vector<int64_t>{r / 2, r % 2}));
    EXPECT_EQ(shardIndex(m.units[0], *m.grid, place.coords), uint64_t(r % 2));
    initFromSpecs(m, buffers, 5, place);
    std::vector<double> shard;
    for (uint64_t i = 0; i < 6; ++i)
      shard.push_back(valueAt(m, buffers, 0, i));
    shards.push_back(shard);
  }
  EXPECT_EQ(shards[0], shards[2]);
  EXPECT_EQ(shards[1], shards[3]);
  EXPECT_NE(shards[0], shards[1]);
  std::vector<double> w = wholeInit("h.0.w", "normal(0, 1)", DType::BF16, 6, 5);
  EXPECT_EQ(shards[0], w);
  EXPECT_EQ(errorAfter([](Json &m) {
              m["ranks"] = 4;
              m["grid"]["shape"] = {2, 2};
            }),
            at + "unit 'h.0': padded 12 is not shard_size 4 times the 2 ranks "
                 "of shard_axes [0]");
}

// Tests a zero1 unit: whole bf16 parameters as param arguments, sharded
// f32 optimizer state whose master slot starts as this rank's piece of
// them; a no_shard unit may leave its sizes unknown (-1) and name the axes
// its gradients are reduced over.
TEST_F(ShardedStateTest, Zero1ShardsTheOptimizerStateOnly) {
  Json json = shardedJson(3);
  json["units"][0]["strategy"] = "zero1";
  json["units"][1]["padded"] = -1;
  json["units"][1]["shard_size"] = -1;
  json["units"][1]["shard_axes"] = {0}; // how DDP reduces: not checked
  json["units"][1]["replicate_axes"] = Json::array();
  Json args = Json::array(), results = Json::array();
  args.push_back({{"role", "param"},
                  {"name", "h.0.w"},
                  {"dtype", "bf16"},
                  {"shape", {2, 3}},
                  {"init", "normal(0, 1)"}});
  args.push_back({{"role", "param"},
                  {"name", "h.0.b"},
                  {"dtype", "bf16"},
                  {"shape", {4}},
                  {"init", "uniform(-1, 1)"}});
  for (size_t i = 1; i < json["arguments"].size(); ++i)
    args.push_back(json["arguments"][i]);
  for (size_t i = 0; i < args.size(); ++i)
    args[i]["index"] = i;
  results.push_back(json["results"][0]);
  for (const Json &a : args)
    if (a["role"] != "hyper")
      results.push_back({{"role", a["role"].get<std::string>() + "_out"},
                         {"name", a["name"]},
                         {"dtype", a["dtype"]},
                         {"shape", a["shape"]}});
  for (size_t i = 0; i < results.size(); ++i)
    results[i]["index"] = i;
  json["arguments"] = args;
  json["results"] = results;
  for (Json &member : json["units"][0]["members"])
    member.erase("init"); // the params' own
  json["signature"] = signatureOf(json);
  Manifest m = parse(json);
  EXPECT_FALSE(m.units[0].paramsSharded());
  EXPECT_TRUE(m.units[0].sharded());
  std::vector<std::string> names;
  for (const StateTensor &t : stateTensors(m))
    names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "h.0.w", "h.0.b", "ln.g", "h.0.w.master", "h.0.b.master",
                       "h.0.w.exp_avg", "h.0.b.exp_avg", "ln.g.exp_avg"}));
  std::vector<double> w = wholeInit("h.0.w", "normal(0, 1)", DType::BF16, 6, 3);
  std::vector<double> b =
      wholeInit("h.0.b", "uniform(-1, 1)", DType::BF16, 4, 3);
  std::vector<double> flat(12, 0.0);
  for (size_t i = 0; i < 6; ++i)
    flat[i] = w[i];
  for (size_t i = 0; i < 4; ++i)
    flat[7 + i] = b[i];
  for (int r = 0; r < 3; ++r) {
    StepBuffers buffers(m, ctx);
    initFromSpecs(m, buffers, 3, RankPlace::of(m, r));
    EXPECT_EQ(valueAt(m, buffers, 0, 5), w[5]);
    for (uint64_t i = 0; i < 4; ++i)
      EXPECT_EQ(valueAt(m, buffers, 2, i), flat[uint64_t(r) * 4 + i]) << r;
  }
  EXPECT_EQ(errorAfter([](Json &m) { m["units"][0]["strategy"] = "zero1"; }),
            at + "param_shard 'h.0' belongs to unit 'h.0', which is zero1 "
                 "(its parameters are param arguments)");
}

// Tests the pieces of members inside shards.
TEST(ShardedPieceTest, Pieces) {
  Manifest m = parse(shardedJson(3));
  const UnitDesc &unit = m.units[0];
  auto piece = [&](size_t member, uint64_t shard) {
    ShardPiece p = shardPiece(unit, unit.members[member], shard);
    return std::vector<uint64_t>{p.begin, p.end, p.shardOffset};
  };
  EXPECT_EQ(piece(0, 0), (std::vector<uint64_t>{0, 4, 0}));
  EXPECT_EQ(piece(0, 1), (std::vector<uint64_t>{4, 6, 0}));
  EXPECT_EQ(piece(0, 2), (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(piece(1, 0), (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(piece(1, 1), (std::vector<uint64_t>{0, 1, 3}));
  EXPECT_EQ(piece(1, 2), (std::vector<uint64_t>{1, 4, 0}));
  EXPECT_EQ(rankFilePath("ck.safetensors", 1, 3), "ck.rank1-of-3.safetensors");
  EXPECT_EQ(rankFilePath("d/ck", 0, 2), "d/ck.rank0-of-2.safetensors");
  EXPECT_EQ(rankFilePath("d/ck.bin", 0, 2), "d/ck.bin.rank0-of-2.safetensors");
}

// Tests consolidated files: loaded piecewise by each rank of 2 and 3, then
// assembled from the ranks' shards into the same tensors; a parameter file
// without optimizer state starts it from the init specs.
TEST_F(ShardedStateTest, ConsolidatedFilesLoadIntoAnyRankCount) {
  TempDir dir;
  std::vector<uint16_t> w(6), b(4);
  std::vector<float> master(10), avg(10), g = {2, 3, 4}, gAvg = {5, 6, 7};
  for (size_t i = 0; i < 6; ++i)
    w[i] = floatToBf16(0.25f * float(i) - 1);
  for (size_t i = 0; i < 4; ++i)
    b[i] = floatToBf16(0.5f * float(i) + 3);
  for (size_t i = 0; i < 10; ++i) {
    master[i] = float(i) + 0.125f;
    avg[i] = -float(i);
  }
  writeSafetensors(dir.file("full.safetensors"),
                   {{"h.0.w", DType::BF16, {2, 3}, w.data()},
                    {"h.0.b", DType::BF16, {4}, b.data()},
                    {"ln.g", DType::F32, {3}, g.data()},
                    {"h.0.w.master", DType::F32, {2, 3}, master.data()},
                    {"h.0.b.master", DType::F32, {4}, master.data() + 6},
                    {"h.0.w.exp_avg", DType::F32, {2, 3}, avg.data()},
                    {"h.0.b.exp_avg", DType::F32, {4}, avg.data() + 6},
                    {"ln.g.exp_avg", DType::F32, {3}, gAvg.data()}},
                   {{"step", "9"}});
  for (int ranks : {2, 3}) {
    SCOPED_TRACE(ranks);
    Manifest m = parse(shardedJson(ranks));
    std::vector<std::unique_ptr<StepBuffers>> rankBuffers;
    std::map<int64_t, std::vector<unsigned char>> gathered;
    for (int r = 0; r < ranks; ++r) {
      rankBuffers.push_back(std::make_unique<StepBuffers>(m, ctx));
      EXPECT_EQ(loadState(m, *rankBuffers.back(), dir.file("full.safetensors"),
                          StateFile::Checkpoint, 0, RankPlace::of(m, r)),
                9);
      for (size_t arg = 0; arg < 3; ++arg) {
        std::vector<unsigned char> &bytes = gathered[int64_t(arg)];
        const unsigned char *shard = static_cast<const unsigned char *>(
            rankBuffers.back()->argument(arg));
        bytes.insert(bytes.end(), shard, shard + m.arguments[arg].type.bytes);
      }
    }
    saveFullState(m, *rankBuffers[0], gathered, dir.file("again.safetensors"),
                  9);
    SafetensorsFile in = SafetensorsFile::read(dir.file("full.safetensors"));
    SafetensorsFile out = SafetensorsFile::read(dir.file("again.safetensors"));
    ASSERT_EQ(out.tensors().size(), 8u);
    EXPECT_EQ(out.tensors()[0].name, "h.0.w");
    EXPECT_EQ(out.tensors()[3].name, "h.0.w.master");
    EXPECT_EQ(*out.findMetadata("ranks"), std::to_string(ranks));
    for (const TensorView &t : in.tensors()) {
      const TensorView *o = out.find(t.name);
      ASSERT_NE(o, nullptr) << t.name;
      EXPECT_EQ(o->dtype, t.dtype) << t.name;
      EXPECT_EQ(o->shape, t.shape) << t.name;
      EXPECT_EQ(std::memcmp(o->data, t.data, t.bytes), 0) << t.name;
    }
  }

  // Parameters alone: master copies them, exp_avg is zeros and ones.
  writeSafetensors(dir.file("params.safetensors"),
                   {{"h.0.w", DType::BF16, {2, 3}, w.data()},
                    {"h.0.b", DType::BF16, {4}, b.data()},
                    {"ln.g", DType::F32, {3}, g.data()}},
                   {});
  Manifest m = parse(shardedJson(2));
  StepBuffers rank1(m, ctx);
  loadState(m, rank1, dir.file("params.safetensors"), StateFile::Parameters, 0,
            RankPlace::of(m, 1));
  // Rank 1 holds flat [6, 12): the gap, then b.
  EXPECT_EQ(valueAt(m, rank1, 0, 0), 0.0);
  EXPECT_EQ(valueAt(m, rank1, 0, 1), double(bf16ToFloat(b[0])));
  EXPECT_EQ(valueAt(m, rank1, 1, 1), double(bf16ToFloat(b[0])));
  EXPECT_EQ(valueAt(m, rank1, 2, 0), 0.0);
  EXPECT_EQ(valueAt(m, rank1, 2, 1), 1.0);
  EXPECT_EQ(valueAt(m, rank1, 2, 5), 0.0);
  EXPECT_EQ(failureOf([&] {
              loadState(m, rank1, dir.file("params.safetensors"),
                        StateFile::Checkpoint, 0, RankPlace::of(m, 1));
            }),
            dir.file("params.safetensors") +
                ": no tensor for opt_state 'h.0.w.master' (f32 [2, 3], in "
                "unit 'h.0') (a --resume file holds every param and "
                "opt_state)");
}

// Tests rank files: a round trip, and the refusals (another rank, rank
// count or layout; not a rank file).
TEST_F(ShardedStateTest, RankFiles) {
  TempDir dir;
  Manifest m = parse(shardedJson(3));
  StepBuffers saved(m, ctx), loaded(m, ctx);
  initFromSpecs(m, saved, 11, RankPlace::of(m, 2));
  std::string path = dir.file("c.rank2-of-3.safetensors");
  saveRankState(m, saved, path, 17, RankPlace::of(m, 2));
  EXPECT_EQ(loadRankState(m, loaded, path, RankPlace::of(m, 2)), 17);
  for (size_t arg = 0; arg < 5; ++arg)
    EXPECT_EQ(std::memcmp(saved.argument(arg), loaded.argument(arg),
                          m.arguments[arg].type.bytes),
              0)
        << arg;
  SafetensorsFile file = SafetensorsFile::read(path);
  EXPECT_EQ(*file.findMetadata("layout"), unitLayoutJson(m));

  EXPECT_EQ(
      failureOf([&] { loadRankState(m, loaded, path, RankPlace::of(m, 1)); }),
      path + ": holds rank 2, not rank 1");
  Json moved = shardedJson(3);
  moved["units"][0]["members"][1]["offset"] = 8;
  Manifest other = parse(moved);
  EXPECT_EQ(failureOf([&] {
              StepBuffers buffers(other, ctx);
              loadRankState(other, buffers, path, RankPlace::of(other, 2));
            }),
            path + ": written for another unit layout than this artifact's "
                   "(--save-full and --resume-full change the layout)");
  Manifest two = parse(shardedJson(2));
  EXPECT_EQ(failureOf([&] {
              StepBuffers buffers(two, ctx);
              loadRankState(two, buffers, path, RankPlace::of(two, 1));
            }),
            path + ": written by a run of 3 ranks, and this run has 2 "
                   "(--save-full and --resume-full change the rank count)");
  std::vector<float> g(3, 1.0f);
  writeSafetensors(dir.file("plain.safetensors"),
                   {{"ln.g", DType::F32, {3}, g.data()}}, {{"step", "1"}});
  EXPECT_EQ(failureOf([&] {
              loadRankState(m, loaded, dir.file("plain.safetensors"),
                            RankPlace::of(m, 0));
            }),
            dir.file("plain.safetensors") +
                ": not a rank file of a sharded run (no 'rank' and 'ranks' in "
                "__metadata__; --resume-full and --init-from read "
                "consolidated files)");
}
