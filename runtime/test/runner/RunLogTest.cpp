//===- RunLogTest.cpp - zshard-run's --log and --stop-on-nan --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// --log FILE (the header and the per-step lines in a file) and --stop-on-nan
// (stop after a step whose loss is not finite) on the hand-written quad
// step: a NaN loss from a parameter file holding NaN, an infinite one from
// an lr of 1e20 (quad's w grows by 1 - 2 lr a step and its loss overflows
// f32 at step 2).
//
//===----------------------------------------------------------------------===//

#include "RunnerSupport.h"

#include "io/Safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

/// The per-step lines of stdout (all but the JSON summary, when there).
std::vector<std::string> stepLines(const RunResult &r) {
  std::vector<std::string> out;
  for (const std::string &line : lines(r.out))
    if (line.rfind("step ", 0) == 0)
      out.push_back(line);
  return out;
}

bool exists(const std::string &path) { return std::ifstream(path).good(); }

} // namespace

// Tests that --log holds the header line and exactly the per-step lines
// stdout gets, also with --quiet (then stdout has the JSON summary only and
// stderr nothing).
TEST(RunLogTest, LogHoldsTheHeaderAndTheStepLines) {
  TempDir dir;
  RunResult r = runTool({artifact("quad"), "--steps", "4", "--lr", "0.1",
                         "--log", dir.file("run.log")},
                        dir);
  ASSERT_RAN(r);
  std::vector<std::string> steps = stepLines(r);
  ASSERT_EQ(steps.size(), 4u) << r.out;
  EXPECT_EQ(steps[0].rfind("step 1/4  loss 3.000000  steps/s ", 0), 0u);
  std::vector<std::string> logged = lines(readText(dir.file("run.log")));
  std::vector<std::string> want = lines(r.err); // the header alone
  ASSERT_EQ(want.size(), 1u) << r.err;
  want.insert(want.end(), steps.begin(), steps.end());
  EXPECT_EQ(logged, want);

  RunResult quiet = runTool({artifact("quad"), "--steps", "3", "--quiet",
                             "--log", dir.file("quiet.log")},
                            dir);
  ASSERT_RAN(quiet);
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(lines(quiet.out).size(), 1u) << quiet.out;
  std::vector<std::string> quietLog = lines(readText(dir.file("quiet.log")));
  ASSERT_EQ(quietLog.size(), 4u) << readText(dir.file("quiet.log"));
  EXPECT_EQ(quietLog[0].rfind("zshard-run: ", 0), 0u);
  EXPECT_NE(quietLog[0].find("; steps 1..3"), std::string::npos);
  for (int s = 1; s <= 3; ++s)
    EXPECT_EQ(
        quietLog[size_t(s)].rfind("step " + std::to_string(s) + "/3  ", 0), 0u);
}

// Tests --stop-on-nan: a NaN loss at step 1 (w holds NaN) and an infinite one
// at step 2 (lr 1e20; and shard2 on 2 rank threads with lr 1e30) stop the run
// after that step with status 2 and one error line naming the step, after the
// step's line and --log-json entry, with the same line at the end of --log, no
// JSON summary and nothing saved; without the option the same runs go on to the
// end.
TEST(RunLogTest, StopOnNanStopsAtTheFirstNonFiniteLoss) {
  TempDir dir;
  std::vector<float> w = {std::nanf(""), 1, 1};
  writeSafetensors(dir.file("nan.safetensors"),
                   {{"w", DType::F32, {3}, w.data()}}, {});
  struct Case {
    const char *name;
    std::vector<std::string> args;
    int64_t step;
    const char *loss, *printed;
  } cases[] = {
      {"nan",
       {artifact("quad"), "--init-from", dir.file("nan.safetensors")},
       1,
       "nan",
       "nan"},
      {"inf", {artifact("quad"), "--lr", "1e20"}, 2, "inf", "inf"},
      {"inf on 2 rank threads",
       {artifact("shard2"), "--lr", "1e30"},
       2,
       "inf",
       "inf"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> args = c.args;
    args.insert(args.end(),
                {"--steps", "5", "--log-json", dir.file("l.jsonl"), "--log",
                 dir.file("run.log"), "--save", dir.file("ck.safetensors")});
    RunResult go = runTool(args, dir);
    ASSERT_RAN(go);
    EXPECT_EQ(stepLines(go).size(), 5u);
    // Unsharded, or rank 0's file of the sharded run.
    const std::string saved[] = {dir.file("ck.safetensors"),
                                 dir.file("ck.rank0-of-2.safetensors")};
    EXPECT_TRUE(exists(saved[0]) || exists(saved[1]));
    for (const std::string &path : saved)
      std::remove(path.c_str());

    args.push_back("--stop-on-nan");
    RunResult r = runTool(args, dir);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    std::string message = "zshard-run: error: step " + std::to_string(c.step) +
                          ": the loss is " + c.loss + " (--stop-on-nan)";
    std::vector<std::string> err = lines(r.err);
    ASSERT_EQ(err.size(), 2u) << r.err; // the header, then the error
    EXPECT_EQ(err[1], message);
    std::vector<std::string> steps = stepLines(r);
    EXPECT_EQ(steps.size(), size_t(c.step)) << r.out;
    EXPECT_EQ(lines(r.out).size(), steps.size()) << "no JSON summary";
    EXPECT_NE(steps.back().find(std::string("loss ") + c.printed),
              std::string::npos)
        << steps.back();
    EXPECT_EQ(lines(readText(dir.file("l.jsonl"))).size(), size_t(c.step));
    std::vector<std::string> logged = lines(readText(dir.file("run.log")));
    ASSERT_EQ(logged.size(), size_t(c.step) + 2);
    EXPECT_EQ(logged.back(), message);
    for (const std::string &path : saved)
      EXPECT_FALSE(exists(path)) << path;
  }
}

// Tests that a finite run with --stop-on-nan is not changed by it, and the
// errors of the two options: a --log in a missing directory, each option
// given twice.
TEST(RunLogTest, OptionsAndErrors) {
  TempDir dir;
  RunResult plain = runTool({artifact("quad"), "--steps", "3", "--quiet"}, dir);
  RunResult stop = runTool(
      {artifact("quad"), "--steps", "3", "--quiet", "--stop-on-nan"}, dir);
  ASSERT_RAN(plain);
  ASSERT_RAN(stop);
  EXPECT_EQ(summaryOf(stop)["final_loss"], summaryOf(plain)["final_loss"]);

  std::string missing = dir.file("missing") + "/run.log";
  struct Case {
    std::vector<std::string> args;
    std::string message;
    bool usage;
  } cases[] = {
      {{artifact("quad"), "--log", missing},
       missing + ": cannot write: No such file or directory",
       false},
      {{artifact("quad"), "--log", "a", "--log", "b"},
       "--log is given twice",
       true},
      {{artifact("quad"), "--stop-on-nan", "--stop-on-nan"},
       "--stop-on-nan is given twice",
       true},
      {{artifact("quad"), "--log"}, "--log needs a value", true},
      {{artifact("quad"), "--log="}, "--log needs a file name", true},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    RunResult r = runTool(c.args, dir);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_EQ(r.out, "");
    std::vector<std::string> err = lines(r.err);
    ASSERT_EQ(err.size(), c.usage ? 2u : 1u) << r.err;
    EXPECT_EQ(err[0], "zshard-run: error: " + c.message);
  }
}
