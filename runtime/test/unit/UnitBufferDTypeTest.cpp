//===- UnitBufferDTypeTest.cpp - Tests of a unit's buffer_dtype -----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// A unit's "buffer_dtype" (FSDP's MixedPrecision buffer_dtype, the unit's
// buffer(T)): read when present, absent when the unit computes its buffers
// in their own type, an unknown name refused in one line; the buffers
// themselves stay in their own type and category.
//
//===----------------------------------------------------------------------===//

#include "step/Manifest.h"
#include "step/StepBuffers.h"

#include "core/Failure.h"

#include "TestSignature.h"
#include "zshard/abi/ManifestSchema.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

using namespace zshard::rt;
using Json = nlohmann::ordered_json;
namespace key = zshard_abi::manifest;

namespace {

/// A full_shard step on 2 ranks: unit "h.0" (w [4] as shards of 2) and a
/// persistent f32 buffer h.0.mix [4]; the unit's buffer_dtype is
/// \p bufferDType, or absent when empty.
Json stepJson(const std::string &bufferDType) {
  Json unit = {
      {key::kName, "h.0"},
      {key::kStrategy, "full_shard"},
      {key::kShardAxes, {0}},
      {key::kReplicateAxes, Json::array()},
      {key::kPadded, 4},
      {key::kShardSize, 2},
      {key::kParamDType, "f32"},
      {key::kReduceDType, "f32"},
      {key::kMembers,
       {{{"name", "h.0.w"}, {"shape", {4}}, {"offset", 0}, {"init", "zeros"}}}},
      {key::kSlots, Json::array()}};
  if (!bufferDType.empty())
    unit[key::kBufferDType] = bufferDType;
  Json m = {{"format", "zshard-artifact"},
            {"version", 2},
            {"library", "step.so"},
            {"entry", "zshard_step"},
            {"signature", ""},
            {"ranks", 2},
            {"grid", {{"name", "world"}, {"shape", {2}}}},
            {"arguments",
             {{{"index", 0},
               {"role", "param_shard"},
               {"name", "h.0"},
               {"unit", "h.0"},
               {"dtype", "f32"},
               {"shape", {2}}},
              {{"index", 1},
               {"role", "buffer"},
               {"name", "h.0.mix"},
               {"dtype", "f32"},
               {"shape", {4}},
               {"init", "ones"},
               {"persistent", true}}}},
            {"results",
             {{{"index", 0},
               {"role", "loss"},
               {"dtype", "f32"},
               {"shape", Json::array()}},
              {{"index", 1},
               {"role", "param_shard_out"},
               {"name", "h.0"},
               {"dtype", "f32"},
               {"shape", {2}}}}},
            {"units", {unit}}};
  m["signature"] = zshard::rt::test::manifestSignature(m);
  return m;
}

Manifest parse(const Json &json) {
  return parseManifest(json.dump(), "a.zsa/manifest.json", "a.zsa");
}

} // namespace

// Tests that each buffer_dtype the compiler writes is read, and that a unit
// without one has none.
TEST(UnitBufferDTypeTest, ReadWhenPresent) {
  EXPECT_EQ(parse(stepJson("bf16")).units.at(0).bufferDType, DType::BF16);
  EXPECT_EQ(parse(stepJson("f16")).units.at(0).bufferDType, DType::F16);
  EXPECT_EQ(parse(stepJson("f32")).units.at(0).bufferDType, DType::F32);
  Manifest own = parse(stepJson(""));
  EXPECT_FALSE(own.units.at(0).bufferDType.has_value());
  // The buffer stays in its own type and category either way.
  Manifest m = parse(stepJson("bf16"));
  EXPECT_EQ(m.arguments.at(1).role, ArgRole::Buffer);
  EXPECT_EQ(m.arguments.at(1).type.dtype, DType::F32);
  EXPECT_EQ(categoryOf(m.arguments.at(1)), ZSHARD_RT_MEM_BUFFERS);
}

// Tests that an unknown buffer_dtype is one line naming the unit.
TEST(UnitBufferDTypeTest, UnknownNameIsRefused) {
  std::string error = "(no error)";
  try {
    parse(stepJson("bfloat16"));
  } catch (const Failure &e) {
    error = e.what();
  }
  EXPECT_EQ(error, "a.zsa/manifest.json: units[0] ('h.0'): unknown dtype "
                   "'bfloat16' (known: f32, f64, f16, bf16, i64, i32, i8, u8, "
                   "u16, u32, i1)");
}
