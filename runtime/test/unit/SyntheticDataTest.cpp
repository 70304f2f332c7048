//===- SyntheticDataTest.cpp - Tests of the built-in synthetic data -------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "data/SyntheticData.h"

#include "core/Philox.h"

#include "TestFiles.h"
#include "TestManifest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {
std::unique_ptr<BatchSource>
synthetic(const Manifest &manifest, uint64_t seed = 0, DataShard shard = {}) {
  DataOptions options;
  options.seed = seed;
  options.shard = shard;
  return makeBatchSource(manifest, options);
}
} // namespace

// Tests that the GPT stream walks one cycle through the whole vocabulary:
// every token has exactly one successor, and targets are the next tokens.
TEST(SyntheticDataTest, GptStreamIsOneCycle) {
  const int64_t V = 50, B = 4, T = 20;
  Manifest manifest = gptManifest(V, B, T);
  auto source = synthetic(manifest, 3);
  std::map<int32_t, int32_t> successor;
  std::vector<int32_t> tokens(B * T), targets(B * T);
  for (int64_t step = 1; step <= 30; ++step) {
    source->fill(step, {tokens.data(), targets.data()});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        int32_t x = tokens[size_t(b * T + t)], y = targets[size_t(b * T + t)];
        ASSERT_GE(x, 0);
        ASSERT_LT(x, V);
        auto [it, fresh] = successor.emplace(x, y);
        ASSERT_EQ(it->second, y) << "token " << x << " has two successors";
        if (t + 1 < T) {
          ASSERT_EQ(tokens[size_t(b * T + t + 1)], y);
        }
      }
  }
  ASSERT_EQ(successor.size(), size_t(V)) << "30 steps visit every token";
  std::set<int32_t> seen;
  int32_t token = 0;
  for (int64_t i = 0; i < V; ++i) {
    seen.insert(token);
    token = successor[token];
  }
  EXPECT_EQ(token, 0);
  EXPECT_EQ(seen.size(), size_t(V)) << "one cycle, not several";
  EXPECT_NE(source->describe().find("vocabulary of 50"), std::string::npos);
}

// Tests determinism: batches depend on (seed, step, row) only, and ranks take
// their rows of the global batch.
TEST(SyntheticDataTest, GptDeterministicAndSharded) {
  Manifest global = gptManifest(30, 4, 6), local = gptManifest(30, 2, 6);
  std::vector<int32_t> a(24), at(24), b(24), bt(24), c(24), ct(24);
  synthetic(global, 1)->fill(5, {a.data(), at.data()});
  synthetic(global, 1)->fill(5, {b.data(), bt.data()});
  EXPECT_EQ(a, b);
  synthetic(global, 2)->fill(5, {c.data(), ct.data()});
  EXPECT_NE(a, c);
  synthetic(global, 1)->fill(6, {c.data(), ct.data()});
  EXPECT_NE(a, c);
  std::vector<int32_t> r(12), rt(12);
  synthetic(local, 1, {1, 2})->fill(5, {r.data(), rt.data()});
  EXPECT_TRUE(std::equal(r.begin(), r.end(), a.begin() + 12));
}

// Tests the MLP regression data: x from the documented stream, target = x W
// with the documented teacher W.
TEST(SyntheticDataTest, MlpTargetIsTheTeacherMap) {
  const int64_t B = 8, dIn = 5, dOut = 3;
  Manifest manifest =
      makeManifest({}, {{"x", "f32", {B, dIn}}, {"target", "f32", {B, dOut}}});
  std::vector<float> x(B * dIn), target(B * dOut);
  synthetic(manifest, 9)->fill(4, {x.data(), target.data()});
  CounterRng xs(dataKey("zshard.data.x", 9), 4);
  CounterRng teacher(dataKey("zshard.data.teacher", 9), 0);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < dIn; ++j)
      ASSERT_EQ(x[size_t(b * dIn + j)],
                float(xs.normal(uint64_t(b * dIn + j))));
    for (int64_t k = 0; k < dOut; ++k) {
      double want = 0;
      for (int64_t j = 0; j < dIn; ++j)
        want += double(x[size_t(b * dIn + j)]) *
                teacher.normal(uint64_t(j * dOut + k)) / std::sqrt(double(dIn));
      EXPECT_NEAR(target[size_t(b * dOut + k)], want, 1e-6);
    }
  }
}

// Tests the MLP classification data: labels are the argmax of the teacher's
// output, with the class count of the last fc.<i>.weight.
TEST(SyntheticDataTest, MlpLabelsAreTheTeacherArgmax) {
  const int64_t B = 200, dIn = 4, classes = 6;
  Manifest manifest =
      makeManifest({{"fc.0.weight", "f32", {dIn, 8}},
                    {"fc.1.weight", "f32", {8, classes}},
                    {"fc.1.bias", "f32", {classes}}},
                   {{"x", "f32", {B, dIn}}, {"labels", "i32", {B}}});
  EXPECT_EQ(mlpClassCount(manifest), classes);
  std::vector<float> x(B * dIn);
  std::vector<int32_t> labels(B);
  synthetic(manifest)->fill(1, {x.data(), labels.data()});
  CounterRng teacher(dataKey("zshard.data.teacher", 0), 0);
  std::set<int32_t> seen;
  for (int64_t b = 0; b < B; ++b) {
    int best = 0;
    double bestValue = -INFINITY;
    for (int64_t k = 0; k < classes; ++k) {
      double y = 0;
      for (int64_t j = 0; j < dIn; ++j)
        y += double(x[size_t(b * dIn + j)]) *
             teacher.normal(uint64_t(j * classes + k)) / 2.0;
      if (y > bestValue) {
        bestValue = y;
        best = int(k);
      }
    }
    ASSERT_EQ(labels[size_t(b)], best);
    seen.insert(labels[size_t(b)]);
  }
  EXPECT_GE(seen.size(), 3u);
}

// Tests which steps get synthetic data, and the errors of those that cannot.
TEST(SyntheticDataTest, WhichStepsGetData) {
  EXPECT_EQ(synthetic(makeManifest({{"w", "f32", {3}}}, {})), nullptr);
  EXPECT_EQ(failureOf([] {
              synthetic(makeManifest(
                  {}, {{"tokens", "i32", {2, 4}}, {"targets", "i32", {2, 4}}}));
            }),
            "synthetic data for a GPT step needs the vocabulary size, and the "
            "step has no token embedding table (param 'wte' [V, D], or one "
            "ending in wte.weight, embed_tokens.weight, ...); give --data or "
            "--batch-file");
  EXPECT_EQ(failureOf([] {
              synthetic(makeManifest(
                  {}, {{"x", "f32", {2, 4}}, {"labels", "i32", {2}}}));
            }),
            "synthetic labels need the class count, and the step has no param "
            "fc.<i>.weight [d_i, d_out]; give --batch-file");
  EXPECT_EQ(failureOf([] {
              synthetic(makeManifest({}, {{"image", "f32", {2, 4}}}));
            }),
            "no data for batch arguments image f32 [2, 4]: the built-in "
            "synthetic data covers GPT steps (tokens, targets) and MLP steps "
            "(x with target or labels); give --batch-file");
  EXPECT_EQ(failureOf([] {
              synthetic(makeManifest(
                  {}, {{"x", "f32", {2, 4}}, {"target", "f32", {3, 4}}}));
            }).substr(0, 32),
            "no data for batch arguments x f3");
}
