//===- ManifestTest.cpp - Tests of artifact manifests ---------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/Manifest.h"
#include "step/StepBuffers.h"

#include "core/Failure.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

using namespace zshard::rt;
using Json = nlohmann::ordered_json;

namespace {

/// A valid manifest: one f32 param w [4, 2] with AdamW state, a batch x and
/// the two hypers.
Json validManifest() {
  Json m = {{"format", "zshard-artifact"},
            {"version", 2},
            {"library", "step.so"},
            {"entry", "zshard_step"},
            {"signature", ""},
            {"ranks", 1},
            {"module", {{"zshard.model", "mlp"}}},
            {"arguments",
             {{{"index", 0},
               {"role", "param"},
               {"name", "w"},
               {"dtype", "f32"},
               {"shape", {4, 2}},
               {"init", "normal(0, 0.02)"}},
              {{"index", 1},
               {"role", "opt_state"},
               {"name", "w.exp_avg"},
               {"param", "w"},
               {"dtype", "f32"},
               {"shape", {4, 2}},
               {"init", "zeros"}},
              {{"index", 2},
               {"role", "batch"},
               {"name", "x"},
               {"dtype", "f32"},
               {"shape", {3, 4}}},
              {{"index", 3},
               {"role", "hyper"},
               {"name", "lr"},
               {"dtype", "f32"},
               {"shape", Json::array()}},
              {{"index", 4},
               {"role", "hyper"},
               {"name", "step"},
               {"dtype", "f32"},
               {"shape", Json::array()}}}},
            {"results",
             {{{"index", 0},
               {"role", "loss"},
               {"dtype", "f32"},
               {"shape", Json::array()}},
              {{"index", 1},
               {"role", "param_out"},
               {"name", "w"},
               {"dtype", "f32"},
               {"shape", {4, 2}}},
              {{"index", 2},
               {"role", "opt_state_out"},
               {"name", "w.exp_avg"},
               {"dtype", "f32"},
               {"shape", {4, 2}}}}},
            {"units", Json::array()}};
  m["signature"] = "b8dc3614adaccb18";
  return m;
}

Manifest parse(const Json &json) {
  return parseManifest(json.dump(), "a.zsa/manifest.json", "a.zsa");
}

std::string errorOf(const std::string &text) {
  try {
    parseManifest(text, "a.zsa/manifest.json", "a.zsa");
  } catch (const Failure &e) {
    return e.what();
  }
  return "(no error)";
}

/// The error after \p edit of the valid manifest, signature recomputed so
/// that only the edit is wrong.
std::string errorAfter(const std::function<void(Json &)> &edit,
                       bool fixSignature = true) {
  Json m = validManifest();
  edit(m);
  std::string text = m.dump();
  if (fixSignature) {
    // Parse once without the signature check to learn the right one.
    try {
      parse(m);
    } catch (const Failure &e) {
      std::string what = e.what();
      std::string key = "whose signature is ";
      size_t at = what.find(key);
      if (at != std::string::npos) {
        m["signature"] = what.substr(at + key.size());
        text = m.dump();
      }
    }
  }
  return errorOf(text);
}

const std::string at = "a.zsa/manifest.json: ";

/// \p json with the signature its arguments and results have.
Json withSignature(Json json) {
  json["signature"] = "0000000000000000";
  std::string error = errorOf(json.dump());
  std::string key = "whose signature is ";
  size_t found = error.find(key);
  if (found != std::string::npos)
    json["signature"] = error.substr(found + key.size());
  return json;
}

} // namespace

// Tests that a valid manifest is read field by field, in index order, with
// results paired to the arguments they update.
TEST(ManifestTest, ReadsAValidManifest) {
  Json json = validManifest();
  // Index order need not be array order.
  std::swap(json["arguments"][0], json["arguments"][4]);
  Manifest m = parse(json);
  EXPECT_EQ(m.dir, "a.zsa");
  EXPECT_EQ(m.libraryPath(), "a.zsa/step.so");
  EXPECT_EQ(m.entry, "zshard_step");
  EXPECT_EQ(m.ranks, 1);
  ASSERT_EQ(m.arguments.size(), 5u);
  EXPECT_EQ(m.arguments[0].name, "w");
  EXPECT_EQ(m.arguments[0].type.elements, 8u);
  EXPECT_EQ(m.arguments[0].type.bytes, 32u);
  EXPECT_EQ(m.arguments[0].init.kind, InitSpec::Kind::Normal);
  EXPECT_EQ(m.arguments[1].param, "w");
  EXPECT_EQ(m.arguments[3].role, ArgRole::Hyper);
  EXPECT_EQ(m.results[1].argument, 0);
  EXPECT_EQ(m.results[2].argument, 1);
  EXPECT_EQ(m.results[0].argument, -1);
  EXPECT_EQ(&m.loss(), &m.results[0]);
  EXPECT_EQ(*m.findModuleAttr("zshard.model"), "mlp");
  EXPECT_EQ(m.findArgument(ArgRole::Batch, "x"), &m.arguments[2]);
  EXPECT_EQ(m.findArgument(ArgRole::Param, "x"), nullptr);
  EXPECT_EQ(signatureText(m),
            "param:w:f32:4x2;opt_state:w.exp_avg:f32:4x2;batch:x:f32:3x4;"
            "hyper:lr:f32:;hyper:step:f32:;->loss::f32:;param_out:w:f32:4x2;"
            "opt_state_out:w.exp_avg:f32:4x2;");
  EXPECT_EQ(computeSignature(m), "b8dc3614adaccb18");
}

// Tests the signature of the format's own example.
TEST(ManifestTest, SignatureOfTheFormatExample) {
  Manifest m;
  ArgumentDesc w;
  w.name = "w";
  w.type.shape = {4, 2};
  m.arguments.push_back(w);
  m.results.push_back(ResultDesc{});
  EXPECT_EQ(signatureText(m), "param:w:f32:4x2;->loss::f32:;");
  EXPECT_EQ(computeSignature(m), "95b96f14decaba53");
}

// Tests the top-level fields' errors.
TEST(ManifestTest, TopLevelErrors) {
  EXPECT_EQ(errorOf("{\"format\": "),
            at + "invalid JSON ([json.exception.parse_error.101] parse error "
                 "at line 1, column 12: syntax error while parsing value - "
                 "unexpected end of input; expected '[', '{', or a literal)");
  EXPECT_EQ(errorOf("[]"), at + "must be a JSON object, got array");
  EXPECT_EQ(errorAfter([](Json &m) { m.erase("format"); }),
            at + "missing field 'format'");
  EXPECT_EQ(errorAfter([](Json &m) { m["format"] = "zshard"; }),
            at + "format 'zshard' is not 'zshard-artifact'");
  EXPECT_EQ(errorAfter([](Json &m) { m["version"] = 1; }),
            at + "manifest version 1 is not supported: this runtime reads "
                 "version 2 (compile the step with a zshard-compile of the "
                 "same release)");
  EXPECT_EQ(errorAfter([](Json &m) { m["version"] = "2"; }),
            at + "field 'version' must be an integer, got \"2\"");
  EXPECT_EQ(errorAfter([](Json &m) { m.erase("library"); }),
            at + "missing field 'library'");
  EXPECT_EQ(errorAfter([](Json &m) { m["entry"] = ""; }),
            at + "field 'entry' is empty");
  EXPECT_EQ(errorAfter([](Json &m) { m.erase("signature"); }),
            at + "missing field 'signature'");
  EXPECT_EQ(errorAfter([](Json &m) { m["ranks"] = 0; }),
            at + "ranks 0 must be at least 1");
  EXPECT_EQ(errorAfter([](Json &m) { m["module"]["x"] = 1; }),
            at + "module: attribute 'x' must be a string, got 1");
  EXPECT_EQ(errorAfter([](Json &m) { m["units"] = 3; }),
            at + "units: must be a list");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"] = Json::object(); }),
            at + "arguments: must be a list");
  EXPECT_EQ(errorAfter([](Json &m) { m.erase("results"); }),
            at + "missing field 'results'");
  // Unknown fields are ignored; module and units may be missing.
  EXPECT_EQ(errorAfter([](Json &m) {
              m["extra"] = true;
              m.erase("module");
              m.erase("units");
            }),
            "(no error)");
}

// Tests the errors of single arguments and results.
TEST(ManifestTest, EntryErrors) {
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][2].erase("index"); }),
            at + "arguments[2] ('x'): missing field 'index'");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][2]["role"] = "input"; }),
            at + "arguments[2] ('x'): unknown argument role 'input' (known: "
                 "param, opt_state, batch, hyper, param_shard, "
                 "opt_state_shard, buffer)");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][2]["dtype"] = "f8"; }),
            at + "arguments[2] ('x'): unknown dtype 'f8' (known: f32, f64, "
                 "f16, bf16, i64, i32, i8, u8, u16, u32, i1)");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["arguments"][2]["shape"] = {3, -4};
            }),
            at + "arguments[2] ('x'): field 'shape' must be a list of "
                 "non-negative integers, got [3,-4]");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][2]["name"] = ""; }),
            at + "arguments[2]: field 'name' is empty");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][0].erase("init"); }),
            at + "arguments[0] ('w'): missing field 'init'");
  EXPECT_EQ(
      errorAfter([](Json &m) { m["arguments"][0]["init"] = "normal(0)"; }),
      at + "arguments[0] ('w'): init spec 'normal(0)': expected ',' at "
           "offset 8");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["arguments"][0]["dtype"] = "i32";
              m["results"][1]["dtype"] = "i32";
            }),
            at + "arguments[0] ('w'): init spec 'normal(0, 0.02)' needs a "
                 "floating-point dtype, not i32");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][1].erase("param"); }),
            at + "arguments[1] ('w.exp_avg'): missing field 'param'");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"][0]["role"] = "output"; }),
            at + "results[0]: unknown result role 'output' (known: loss, "
                 "param_out, opt_state_out, param_shard_out, "
                 "opt_state_shard_out)");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"][0]["name"] = "l"; }),
            at + "results[0] ('l'): the loss has no name, got 'l'");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"][0]["name"] = ""; }),
            "(no error)");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][3]["index"] = 2; }),
            at + "arguments: indices must be 0..4 each once; index 2 appears "
                 "twice");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"][2]["index"] = 7; }),
            at + "results: indices must be 0..2 each once; index 7 is out of "
                 "place");
}

// Tests the rules across arguments and results (docs/contract.md).
TEST(ManifestTest, RoleErrors) {
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][1]["param"] = "v"; }),
            at + "opt_state 'w.exp_avg' belongs to param 'v', which is not an "
                 "argument");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["arguments"][1]["shape"] = {8};
              m["results"][2]["shape"] = {8};
            }),
            at + "opt_state 'w.exp_avg' has shape [8] but its param 'w' has "
                 "[4, 2]");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][4]["name"] = "lr"; }),
            at + "two batch or hyper arguments are named 'lr'");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][3]["shape"] = {1}; }),
            at + "hyper 'lr' must be a scalar (shape []), got [1]");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"][0]["shape"] = {1}; }),
            at + "the loss must be a float scalar, got f32 [1]");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["results"][0]["role"] = "param_out";
              m["results"][0]["name"] = "w";
            }),
            at + "param_out 'w' is f32 [] but its argument is f32 [4, 2]");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["results"][0] = m["results"][1];
              m["results"][0]["index"] = 0;
            }),
            at + "param_out 'w' is returned twice");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"][1]["name"] = "v"; }),
            at + "param_out 'v' updates no param argument of that name");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"][1]["dtype"] = "bf16"; }),
            at + "param_out 'w' is bf16 [4, 2] but its argument is f32 [4, "
                 "2]");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"].erase(2); }),
            at + "opt_state 'w.exp_avg' has no opt_state_out result");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["results"].erase(0);
              m["results"][0]["index"] = 0;
              m["results"][1]["index"] = 1;
            }),
            at + "no loss result");
  EXPECT_EQ(errorAfter([](Json &m) {
              m["results"].push_back(m["results"][0]);
              m["results"][3]["index"] = 3;
            }),
            at + "more than one loss result");
}

// Tests the signature checks.
TEST(ManifestTest, SignatureErrors) {
  EXPECT_EQ(
      errorAfter([](Json &m) { m["signature"] = "B8DC3614ADACCB18"; }, false),
      at + "signature 'B8DC3614ADACCB18' is not 16 lower-case hex "
           "digits");
  EXPECT_EQ(errorAfter([](Json &m) { m["signature"] = "b8dc3614"; }, false),
            at + "signature 'b8dc3614' is not 16 lower-case hex digits");
  EXPECT_EQ(errorAfter(
                [](Json &m) {
                  m["arguments"][2]["shape"] = {3, 5};
                },
                false),
            at + "signature b8dc3614adaccb18 does not match the arguments and "
                 "results, whose signature is 2a7c31c9ec193d0b");
}

// Tests loading from a directory: missing, not a directory, no manifest.
TEST(ManifestTest, LoadErrors) {
  char pattern[] = "/tmp/zshard-manifest-XXXXXX";
  std::string dir = mkdtemp(pattern);
  auto loadError = [](const std::string &path) {
    try {
      loadManifest(path);
    } catch (const Failure &e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(loadError(dir + "/none.zsa"),
            dir + "/none.zsa: no such artifact (expected a directory NAME.zsa "
                  "holding manifest.json)");
  EXPECT_EQ(loadError(dir + "/"),
            dir + "/manifest.json: cannot open: No such file or directory");
  std::ofstream(dir + "/manifest.json") << validManifest().dump();
  EXPECT_EQ(loadError(dir + "/manifest.json"),
            dir + "/manifest.json: not an artifact directory (expected a "
                  "directory NAME.zsa holding manifest.json)");
  EXPECT_EQ(loadError(dir + "//"), "(no error)");
  EXPECT_EQ(loadManifest(dir).path, dir + "/manifest.json");
  unlink((dir + "/manifest.json").c_str());
  rmdir(dir.c_str());
}

// Tests the placement of offloaded optimizer state and in-place results:
// read, covered by the signature, and rejected where they make no sense.
TEST(ManifestTest, PlacementAndInPlace) {
  Json json = validManifest();
  json["arguments"][1]["placement"] = "host";
  json["results"][1]["in_place"] = true;
  json["results"][2]["in_place"] = true;
  Manifest m = parse(withSignature(json));
  EXPECT_EQ(m.arguments[1].placement, Placement::Host);
  EXPECT_EQ(m.arguments[0].placement, Placement::Device);
  EXPECT_TRUE(m.results[1].inPlace);
  EXPECT_FALSE(m.results[0].inPlace);
  EXPECT_EQ(signatureText(m),
            "param:w:f32:4x2;opt_state:w.exp_avg:f32:4x2;batch:x:f32:3x4;"
            "hyper:lr:f32:;hyper:step:f32:;->loss::f32:;"
            "param_out(in_place):w:f32:4x2;"
            "opt_state_out(in_place):w.exp_avg:f32:4x2;");

  EXPECT_EQ(
      errorAfter([](Json &m) { m["arguments"][0]["placement"] = "host"; }),
      at + "arguments[0] ('w'): only optimizer state can be "
           "placed in host memory");
  EXPECT_EQ(
      errorAfter([](Json &m) { m["arguments"][1]["placement"] = "disk"; }),
      at + "arguments[1] ('w.exp_avg'): placement must be 'device' or "
           "'host', got 'disk'");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"][0]["in_place"] = true; }),
            at + "results[0]: the loss cannot be in place");
  EXPECT_EQ(errorAfter([](Json &m) { m["results"][1]["in_place"] = 1; }),
            at + "results[1] ('w'): field 'in_place' must be true or false, "
                 "got 1");
}

// Tests the optional "default" of a hyper (the lr the producer recorded) and
// the optional "target" and "chip": read, outside the signature, and checked.
TEST(ManifestTest, HyperDefaultAndTarget) {
  Json json = validManifest();
  json["arguments"][3]["default"] = 3e-4;
  json["target"] = "cuda";
  json["chip"] = "sm_90";
  Manifest m = parse(json); // the signature does not change
  ASSERT_TRUE(m.arguments[3].defaultValue);
  EXPECT_EQ(*m.arguments[3].defaultValue, 3e-4);
  EXPECT_FALSE(m.arguments[4].defaultValue);
  EXPECT_EQ(m.target, "cuda");
  EXPECT_EQ(m.chip, "sm_90");
  EXPECT_EQ(parse(validManifest()).target, "");

  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][2]["default"] = 1; }),
            at + "arguments[2] ('x'): field 'default' is for hyper arguments "
                 "only");
  EXPECT_EQ(errorAfter([](Json &m) { m["arguments"][3]["default"] = "3e-4"; }),
            at + "arguments[3] ('lr'): field 'default' must be a finite "
                 "number, got \"3e-4\"");
  EXPECT_EQ(errorAfter([](Json &m) { m["target"] = "gpu"; }),
            at + "target 'gpu' is not 'cpu' or 'cuda'");
  EXPECT_EQ(errorAfter([](Json &m) { m["target"] = 1; }),
            at + "field 'target' must be a string, got 1");
}

/// The valid manifest with a persistent buffer argument "scale" [4] (index 5).
Json withBuffer(bool persistent = true) {
  Json m = validManifest();
  m["arguments"].push_back({{"index", 5},
                            {"role", "buffer"},
                            {"name", "scale"},
                            {"dtype", "f32"},
                            {"shape", {4}},
                            {"init", "ones"},
                            {"persistent", persistent}});
  return m;
}

// Tests the buffer role: read with its init spec and persistence, charged
// to the buffers category, and every rule on it.
TEST(ManifestTest, BufferArguments) {
  Manifest m = parse(withSignature(withBuffer()));
  ASSERT_EQ(m.arguments.size(), 6u);
  EXPECT_EQ(m.arguments[5].role, ArgRole::Buffer);
  EXPECT_TRUE(m.arguments[5].persistent);
  EXPECT_EQ(m.arguments[5].init.kind, InitSpec::Kind::Ones);
  EXPECT_TRUE(isCheckpointed(m.arguments[5]));
  EXPECT_FALSE(isStateRole(ArgRole::Buffer));
  EXPECT_EQ(categoryOf(m.arguments[5]), ZSHARD_RT_MEM_BUFFERS);
  Manifest derived = parse(withSignature(withBuffer(false)));
  EXPECT_FALSE(isCheckpointed(derived.arguments[5]));

  auto errorWith = [](const std::function<void(Json &)> &edit) {
    return errorAfter([&](Json &m) {
      m = withBuffer();
      edit(m);
    });
  };
  EXPECT_EQ(errorWith([](Json &m) { m["arguments"][5].erase("persistent"); }),
            at + "arguments[5] ('scale'): a buffer needs field 'persistent'");
  EXPECT_EQ(errorWith([](Json &m) { m["arguments"][5]["persistent"] = 1; }),
            at + "arguments[5] ('scale'): field 'persistent' must be true or "
                 "false, got 1");
  EXPECT_EQ(errorWith([](Json &m) { m["arguments"][0]["persistent"] = true; }),
            at + "arguments[0] ('w'): field 'persistent' is for buffer "
                 "arguments only");
  EXPECT_EQ(errorWith([](Json &m) { m["arguments"][5].erase("init"); }),
            at + "arguments[5] ('scale'): missing field 'init'");
  EXPECT_EQ(errorWith([](Json &m) { m["arguments"][5]["init"] = "param"; }),
            at + "arguments[5] ('scale'): init spec 'param' is for opt_state "
                 "arguments only");
  EXPECT_EQ(errorWith([](Json &m) { m["arguments"][5]["name"] = "w"; }),
            at + "state tensor 'w' is both param 'w' and buffer 'w'");
  EXPECT_EQ(errorWith([](Json &m) {
              m["arguments"][4]["role"] = "buffer";
              m["arguments"][4]["name"] = "scale";
              m["arguments"][4]["shape"] = {4};
              m["arguments"][4]["init"] = "ones";
              m["arguments"][4]["persistent"] = false;
            }),
            at + "two buffer arguments are named 'scale'");
}

// Tests the buffers of a step with an in-place result and offloaded state:
// the in-place result is its argument's buffer (allocated once, never
// swapped), the offloaded state and its out-of-place update are charged to
// the host pool, which the device total leaves out.
TEST(StepBuffersTest, InPlaceResultsAndHostPlacement) {
  Json json = validManifest();
  json["arguments"][1]["placement"] = "host";
  json["results"][1]["in_place"] = true;
  Manifest m = parse(withSignature(json));
  zshard_rt_mem_ctx *ctx = nullptr;
  ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  {
    StepBuffers buffers(m, ctx);
    EXPECT_EQ(buffers.result(1), buffers.argument(0));
    EXPECT_NE(buffers.result(2), buffers.argument(1));
    uint64_t params = 0, host = 0, optimizer = 0, total = 0;
    zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_PARAMETERS, &params);
    zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_HOST_OFFLOAD, &host);
    zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_OPTIMIZER_STATE, &optimizer);
    zshard_rt_mem_total_live_bytes(ctx, &total);
    EXPECT_EQ(params, 32u); // w once
    EXPECT_EQ(host, 64u);   // w.exp_avg and its update
    EXPECT_EQ(optimizer, 0u);
    // params, x (48), lr, step, loss (4 each): not the host pool.
    EXPECT_EQ(total, 32u + 48u + 12u);
    void *w = buffers.argument(0), *state = buffers.argument(1);
    void *update = buffers.result(2);
    buffers.swapUpdated();
    EXPECT_EQ(buffers.argument(0), w);
    EXPECT_EQ(buffers.result(1), w);
    EXPECT_EQ(buffers.argument(1), update);
    EXPECT_EQ(buffers.result(2), state);
  }
  uint64_t total = 1;
  zshard_rt_mem_total_live_bytes(ctx, &total);
  EXPECT_EQ(total, 0u);
  zshard_rt_mem_ctx_destroy(ctx);
}
