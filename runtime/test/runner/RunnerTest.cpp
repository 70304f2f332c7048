//===- RunnerTest.cpp - Tests of zshard-run on hand-written artifacts -----===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard-run drives the steps of test/steps (see each .c file for what it
// computes), so every figure here is known in advance.
//
//===----------------------------------------------------------------------===//

#include "RunnerSupport.h"

#include "io/Safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

std::vector<float> floatsOf(const SafetensorsFile &file,
                            const std::string &name) {
  const TensorView *t = file.find(name);
  if (!t || t->dtype != DType::F32)
    return {};
  std::vector<float> out(t->elements);
  std::memcpy(out.data(), t->data, t->bytes);
  return out;
}

} // namespace

// Tests the quad step: losses 3 (1 - 2 lr)^(2 (s - 1)), the optimizer state
// (the sum of the step numbers), the plain per-step lines, the log and the
// JSON summary with exact memory peaks.
TEST(RunnerTest, QuadLossesAreAnalytic) {
  TempDir dir;
  RunResult r =
      runTool({artifact("quad"), "--steps", "6", "--lr", "0.1", "--log-json",
               dir.file("log.jsonl"), "--save", dir.file("out.safetensors")},
              dir);
  ASSERT_RAN(r);
  std::vector<std::string> out = lines(r.out);
  ASSERT_EQ(out.size(), 7u);
  std::regex stepLine(R"(step ([0-9]+)/6  loss ([0-9.]+)  steps/s [0-9]+)");
  std::vector<double> logged = loggedLosses(dir.file("log.jsonl"));
  ASSERT_EQ(logged.size(), 6u);
  for (int s = 1; s <= 6; ++s) {
    double want = 3 * std::pow(0.8, 2 * (s - 1));
    std::smatch match;
    ASSERT_TRUE(std::regex_match(out[size_t(s - 1)], match, stepLine))
        << out[size_t(s - 1)];
    EXPECT_EQ(std::stoi(match[1]), s);
    EXPECT_NEAR(std::stod(match[2]), want, 1e-6);
    EXPECT_NEAR(logged[size_t(s - 1)], want, 1e-6 * want);
  }
  Json summary = summaryOf(r);
  EXPECT_EQ(summary["steps"], 6);
  EXPECT_EQ(summary["first_step"], 1);
  EXPECT_EQ(summary["last_step"], 6);
  EXPECT_EQ(summary["final_loss"].get<double>(), logged.back());
  EXPECT_GT(summary["mean_step_ms"].get<double>(), 0.0);
  double fraction = summary["sgemm_fraction"].get<double>();
  EXPECT_GT(fraction, 0.0);
  EXPECT_LE(fraction, 1.0);
  // w and w_out; w.exp_avg twice; lr, step and loss; the step's one float.
  Json peaks = summary["peak_bytes"];
  EXPECT_EQ(peaks["parameters"], 24);
  EXPECT_EQ(peaks["optimizer_state"], 24);
  EXPECT_EQ(peaks["other"], 12);
  EXPECT_EQ(peaks["activations"], 4);
  EXPECT_EQ(peaks["gradients"], 0);
  EXPECT_EQ(peaks["total"], 64);

  SafetensorsFile saved = SafetensorsFile::read(dir.file("out.safetensors"));
  EXPECT_EQ(*saved.findMetadata("step"), "6");
  EXPECT_EQ(*saved.findMetadata("model"), "quad");
  EXPECT_EQ(*saved.findMetadata("producer"), "zshard-run");
  EXPECT_EQ(*saved.findMetadata("signature"), "dbb7bd2d18a643f3");
  EXPECT_EQ(floatsOf(saved, "w.exp_avg"), std::vector<float>(3, 21.0f));
  std::vector<float> w = floatsOf(saved, "w");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NEAR(w[0], std::pow(0.8, 6), 1e-6);
  EXPECT_NE(r.err.find("3 parameters"), std::string::npos) << r.err;
}

// Tests that 6 steps equal 3 steps, a save, a resume and 3 more: the same
// losses bit for bit and byte-identical checkpoints, for a step without
// data, one on a token file, one on synthetic data, and one on a batch file.
TEST(RunnerTest, ResumeEqualsOneRun) {
  TempDir dir;
  std::vector<uint16_t> tokens(300);
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = uint16_t((i * 5 + i / 7) % 16);
  writeVector(dir.file("train.bin"), tokens);
  std::vector<float> x(4 * 5 * 4), target(4 * 5 * 3);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(float(i));
  for (size_t i = 0; i < target.size(); ++i)
    target[i] = std::cos(float(i));
  writeSafetensors(dir.file("batch.safetensors"),
                   {{"x", DType::F32, {4, 5, 4}, x.data()},
                    {"target", DType::F32, {4, 5, 3}, target.data()}},
                   {});
  struct Case {
    const char *name;
    std::vector<std::string> args;
  } cases[] = {
      {"quad", {artifact("quad")}},
      {"tokens", {artifact("tokens"), "--data", dir.file("train.bin")}},
      {"mlp", {artifact("mlp"), "--seed", "5"}},
      {"mlp-batch-file",
       {artifact("mlp"), "--batch-file", dir.file("batch.safetensors")}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    auto run = [&](std::vector<std::string> extra, const std::string &tag) {
      std::vector<std::string> args = c.args;
      args.insert(args.end(), extra.begin(), extra.end());
      args.insert(args.end(), {"--lr", "0.05", "--quiet", "--log-json",
                               dir.file(tag + ".jsonl"), "--save",
                               dir.file(tag + ".safetensors")});
      RunResult r = runTool(args, dir);
      EXPECT_EQ(r.exitCode, 0) << r.err;
      EXPECT_EQ(lines(r.out).size(), 1u) << "--quiet prints the summary only";
      return r;
    };
    run({"--steps", "6"}, "whole");
    run({"--steps", "3"}, "first");
    RunResult second = run(
        {"--steps", "3", "--resume", dir.file("first.safetensors")}, "second");
    EXPECT_EQ(summaryOf(second)["first_step"], 4);
    std::vector<double> whole = loggedLosses(dir.file("whole.jsonl"));
    std::vector<double> parts = loggedLosses(dir.file("first.jsonl"));
    std::vector<double> rest = loggedLosses(dir.file("second.jsonl"));
    parts.insert(parts.end(), rest.begin(), rest.end());
    EXPECT_EQ(whole, parts);
    EXPECT_EQ(readFileBytes(dir.file("whole.safetensors")),
              readFileBytes(dir.file("second.safetensors")));
  }
}

// Tests the token data end to end: every window of the file is a window of
// the stream, so the tokens step sees no mismatch and no token outside the
// vocabulary (its loss would jump by 1000 or 1e6), and the loss is the mean
// of the window.
TEST(RunnerTest, TokenFileAndSyntheticWindowsAreConsistent) {
  TempDir dir;
  std::vector<uint32_t> tokens(1000);
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = uint32_t(i % 16);
  writeVector(dir.file("train32.bin"), tokens);
  for (std::vector<std::string> data :
       {std::vector<std::string>{"--data", dir.file("train32.bin"),
                                 "--data-dtype", "u32"},
        std::vector<std::string>{}}) {
    std::vector<std::string> args = {artifact("tokens"), "--steps", "20",
                                     "--log-json", dir.file("log.jsonl")};
    args.insert(args.end(), data.begin(), data.end());
    RunResult r = runTool(args, dir);
    ASSERT_RAN(r);
    for (double loss : loggedLosses(dir.file("log.jsonl"))) {
      EXPECT_GE(loss, 0.0);
      EXPECT_LT(loss, 1.5 * 15);
    }
  }
}

// Tests a batch file with a step axis: the tokens step's loss is known from
// the batch, entry (s - 1) mod S at step s.
TEST(RunnerTest, BatchFileFeedsTheSteps) {
  TempDir dir;
  // Entry e: row b is the run e + b, e + b + 1, ... (mod 16); targets next.
  std::vector<int32_t> tokens(2 * 2 * 8), targets(2 * 2 * 8);
  double want[2] = {0, 0};
  for (int e = 0; e < 2; ++e)
    for (int b = 0; b < 2; ++b)
      for (int t = 0; t < 8; ++t) {
        size_t at = size_t((e * 2 + b) * 8 + t);
        tokens[at] = (3 * e + b + t) % 16;
        targets[at] = (3 * e + b + t + 1) % 16;
        want[e] += (tokens[at] + 0.5 * targets[at]) / 16;
      }
  writeSafetensors(dir.file("b.safetensors"),
                   {{"tokens", DType::I32, {2, 2, 8}, tokens.data()},
                    {"targets", DType::I32, {2, 2, 8}, targets.data()}},
                   {});
  RunResult r =
      runTool({artifact("tokens"), "--steps", "5", "--batch-file",
               dir.file("b.safetensors"), "--log-json", dir.file("log.jsonl")},
              dir);
  ASSERT_RAN(r);
  std::vector<double> losses = loggedLosses(dir.file("log.jsonl"));
  ASSERT_EQ(losses.size(), 5u);
  for (int s = 1; s <= 5; ++s)
    EXPECT_NEAR(losses[size_t(s - 1)], want[(s - 1) % 2], 1e-5) << "step " << s;
}

// Tests --init-from: parameters from the file (BF16 widened), optimizer state
// from the file when there, else from its init spec; the run starts at 1.
TEST(RunnerTest, InitFrom) {
  TempDir dir;
  std::vector<float> w = {1, 2, 3}, m = {10, 20, 30};
  writeSafetensors(dir.file("params.safetensors"),
                   {{"w", DType::F32, {3}, w.data()}}, {{"step", "7"}});
  RunResult r = runTool({artifact("quad"), "--steps", "1", "--init-from",
                         dir.file("params.safetensors"), "--save",
                         dir.file("out.safetensors")},
                        dir);
  ASSERT_RAN(r);
  EXPECT_EQ(summaryOf(r)["final_loss"], 14.0);
  EXPECT_EQ(summaryOf(r)["first_step"], 1);
  SafetensorsFile out = SafetensorsFile::read(dir.file("out.safetensors"));
  EXPECT_EQ(floatsOf(out, "w.exp_avg"), std::vector<float>(3, 1.0f));

  std::vector<uint16_t> bf16 = {0x3f80, 0x4000, 0x4040}; // 1 2 3
  writeSafetensors(dir.file("params.safetensors"),
                   {{"w", DType::BF16, {3}, bf16.data()},
                    {"w.exp_avg", DType::F32, {3}, m.data()}},
                   {});
  r = runTool({artifact("quad"), "--steps", "2", "--init-from",
               dir.file("params.safetensors"), "--save",
               dir.file("out.safetensors")},
              dir);
  ASSERT_RAN(r);
  out = SafetensorsFile::read(dir.file("out.safetensors"));
  EXPECT_EQ(floatsOf(out, "w.exp_avg"), (std::vector<float>{13, 23, 33}));
  EXPECT_EQ(*out.findMetadata("step"), "2");
}

// Tests --seed and --steps 0: the init depends on the seed only, and zero
// steps save the initial state as step 0.
TEST(RunnerTest, SeedsAndZeroSteps) {
  TempDir dir;
  auto initOf = [&](const std::string &seed, const std::string &file) {
    RunResult r = runTool({artifact("tokens"), "--steps", "0", "--seed", seed,
                           "--save", dir.file(file)},
                          dir);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(summaryOf(r)["steps"], 0);
    EXPECT_TRUE(summaryOf(r)["final_loss"].is_null());
    return readFileBytes(dir.file(file));
  };
  EXPECT_EQ(initOf("0", "a"), initOf("0", "b"));
  EXPECT_NE(initOf("0", "a"), initOf("1", "c"));
  SafetensorsFile a = SafetensorsFile::read(dir.file("a"));
  EXPECT_EQ(*a.findMetadata("step"), "0");
  std::vector<float> wte = floatsOf(a, "wte");
  ASSERT_EQ(wte.size(), 64u);
  // The documented init: normal(0, 0.02) of "wte" under seed 0.
  EXPECT_EQ(wte[0], -0.02226865477859974f);
  double sumSq = 0;
  for (float v : wte)
    sumSq += double(v) * v;
  EXPECT_NEAR(std::sqrt(sumSq / 64), 0.02, 0.006);
}

// Tests that the one-layer MLP learns the synthetic teacher (to a small
// fraction of its first loss), with two BLAS threads.
TEST(RunnerTest, MlpLearnsTheSyntheticTeacher) {
  TempDir dir;
  RunResult r = runTool({artifact("mlp"), "--steps", "400", "--lr", "0.02",
                         "--threads", "2", "--log-json", dir.file("log.jsonl")},
                        dir);
  ASSERT_RAN(r);
  std::vector<double> losses = loggedLosses(dir.file("log.jsonl"));
  ASSERT_EQ(losses.size(), 400u);
  EXPECT_LT(losses.back(), losses.front() / 100) << losses.front();
  std::regex line(R"(step [0-9]+/400  loss [0-9.]+  samples/s [0-9]+)");
  EXPECT_TRUE(std::regex_match(lines(r.out).front(), line))
      << lines(r.out).front();
}

// Tests --help and --version.
TEST(RunnerTest, HelpAndVersion) {
  TempDir dir;
  RunResult r = runTool({"--help"}, dir);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.out.find("--resume F"), std::string::npos);
  r = runTool({"--version"}, dir);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out.rfind("zshard-run ", 0), 0u);
}

// Tests that --device cpu is the default, exactly: the same losses, the same
// saved bytes and the same memory peaks as a run without the option.
TEST(RunnerTest, DeviceCpuIsTheDefault) {
  for (const char *name : {"quad", "mlp"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    RunResult plain =
        runTool({artifact(name), "--steps", "4", "--log-json",
                 dir.file("a.jsonl"), "--save", dir.file("a.safetensors")},
                dir);
    ASSERT_RAN(plain);
    RunResult cpu = runTool({artifact(name), "--device", "cpu", "--steps", "4",
                             "--log-json", dir.file("b.jsonl"), "--save",
                             dir.file("b.safetensors")},
                            dir);
    ASSERT_RAN(cpu);
    EXPECT_EQ(loggedLosses(dir.file("a.jsonl")),
              loggedLosses(dir.file("b.jsonl")));
    EXPECT_EQ(readText(dir.file("a.safetensors")),
              readText(dir.file("b.safetensors")));
    EXPECT_EQ(summaryOf(plain)["peak_bytes"], summaryOf(cpu)["peak_bytes"]);
    EXPECT_EQ(summaryOf(cpu)["backend"], "local");
  }
}
