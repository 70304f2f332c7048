//===- LrScheduleTest.cpp - zshard-run's learning-rate schedules ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// --warmup-steps, --lr-decay, --decay-steps and --min-lr on the hand-written
// quad and shard2 steps: the lr of each step in --log-json against nanoGPT's
// get_lr computed by Python (ZSHARD_PYTHON), the step receiving it (quad's
// loss falls by (1 - 2 lr)^2 a step), a resumed run continuing the schedule
// bit for bit, and every bad combination of the options.
//
//===----------------------------------------------------------------------===//

#include "RunnerSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

/// nanoGPT's get_lr (train.py), as it is written there; "constant" is its
/// warmup followed by the peak lr. Prints get_lr(it) for it = 0..steps-1.
const char *getLrScript = R"(import math, sys
learning_rate, warmup_iters, decay, lr_decay_iters, min_lr, steps = (
    float(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
    float(sys.argv[5]), int(sys.argv[6]))

def get_lr(it):
    # 1) linear warmup for warmup_iters steps
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if decay == "constant":
        return learning_rate
    # 2) if it > lr_decay_iters, return min learning rate
    if it > lr_decay_iters:
        return min_lr
    # 3) in between, use cosine (or linear) decay down to min learning rate
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    if decay == "cosine":
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    else:
        coeff = 1.0 - decay_ratio
    return min_lr + coeff * (learning_rate - min_lr)

for it in range(steps):
    print(repr(get_lr(it)))
)";

/// Python's get_lr for iterations 0..steps-1 (zshard-run's steps 1..steps).
std::vector<double> pythonLrs(const TempDir &dir, double lr, int64_t warmup,
                              const std::string &decay, int64_t decaySteps,
                              double minLr, int64_t steps) {
  std::string script = dir.file("get_lr.py");
  std::ofstream(script) << getLrScript;
  char args[256];
  std::snprintf(args, sizeof args, " %.17g %lld %s %lld %.17g %lld", lr,
                static_cast<long long>(warmup), decay.c_str(),
                static_cast<long long>(decaySteps), minLr,
                static_cast<long long>(steps));
  RunResult r = runShell(
      shellQuote(ZSHARD_PYTHON) + " " + shellQuote(script) + args, dir);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::vector<double> out;
  for (const std::string &line : lines(r.out))
    out.push_back(std::strtod(line.c_str(), nullptr));
  return out;
}

/// The "lr" and "loss" of each line of a --log-json file.
struct Logged {
  std::vector<double> lrs, losses;
};

Logged readLog(const std::string &path) {
  Logged out;
  for (const std::string &line : lines(readText(path))) {
    Json object = Json::parse(line);
    out.lrs.push_back(object.value("lr", std::nan("")));
    out.losses.push_back(object["loss"].get<double>());
  }
  return out;
}

struct ScheduleCase {
  const char *name;
  std::vector<std::string> options;
  /// The peak lr the run must use (--lr, the artifact's, or 0.001).
  double peak;
  int64_t warmup;
  const char *decay;
  int64_t decaySteps;
  double minLr;
};

} // namespace

// Tests that each schedule's lr per step (--log-json "lr") equals nanoGPT's
// get_lr(s - 1) as Python computes it, to 1e-12 relative, through warmup,
// decay and past its end; that the peak is --lr, else the artifact's recorded
// lr, else 0.001; and that the step gets that lr (quad's loss at step s + 1
// is its loss at s times (1 - 2 lr_s)^2).
TEST(LrScheduleTest, EachScheduleIsNanoGptsGetLr) {
  TempDir dir;
  Json m = quadManifest();
  m["arguments"][2]["default"] = 0.05;
  std::string recorded = writeArtifact(dir, "recorded", m);
  const int64_t steps = 16;
  ScheduleCase cases[] = {
      {"cosine, --lr",
       {artifact("quad"), "--lr", "0.01", "--warmup-steps", "3", "--lr-decay",
        "cosine", "--decay-steps", "12", "--min-lr", "0.0001"},
       0.01,
       3,
       "cosine",
       12,
       1e-4},
      {"linear, the artifact's lr",
       {recorded, "--warmup-steps", "2", "--lr-decay", "linear",
        "--decay-steps", "9", "--min-lr", "0.002"},
       0.05,
       2,
       "linear",
       9,
       0.002},
      {"cosine without warmup, min-lr 0",
       {artifact("quad"), "--lr", "0.1", "--lr-decay", "cosine",
        "--decay-steps", "7"},
       0.1,
       0,
       "cosine",
       7,
       0},
      {"warmup then constant, zshard-run's default lr",
       {artifact("quad"), "--warmup-steps", "4", "--lr-decay", "constant"},
       0.001,
       4,
       "constant",
       0,
       0},
      {"no schedule",
       {artifact("quad"), "--lr", "0.02"},
       0.02,
       0,
       "constant",
       0,
       0},
  };
  for (const ScheduleCase &c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> args = c.options;
    args.insert(args.end(), {"--steps", std::to_string(steps), "--log-json",
                             dir.file("l")});
    RunResult r = runTool(args, dir);
    ASSERT_RAN(r);
    EXPECT_EQ(summaryOf(r)["lr"].get<double>(), c.peak);
    Logged logged = readLog(dir.file("l"));
    std::vector<double> want =
        pythonLrs(dir, c.peak, c.warmup, c.decay, c.decaySteps, c.minLr, steps);
    ASSERT_EQ(logged.lrs.size(), size_t(steps));
    ASSERT_EQ(want.size(), size_t(steps));
    for (int64_t s = 0; s < steps; ++s) {
      SCOPED_TRACE("step " + std::to_string(s + 1));
      EXPECT_NEAR(logged.lrs[size_t(s)], want[size_t(s)],
                  1e-12 * std::fabs(want[size_t(s)]));
      if (s + 1 < steps) {
        double lr = double(float(logged.lrs[size_t(s)]));
        double next = logged.losses[size_t(s)] * (1 - 2 * lr) * (1 - 2 * lr);
        EXPECT_NEAR(logged.losses[size_t(s) + 1], next, 1e-5 * next);
      }
    }
    // The header names the schedule.
    if (c.warmup > 0 || std::string(c.decay) != "constant") {
      EXPECT_NE(r.err.find(std::string(c.decay) == "constant"
                               ? ", then constant; "
                               : std::string(c.decay) + " decay to "),
                std::string::npos)
          << r.err;
    }
  }
}

// Tests that a run saved at step k and resumed gives the steps after k the
// lr and the losses of the uninterrupted run, bit for bit, on the unsharded
// quad step and on the sharded shard2 step (two rank threads, rank files),
// with k in the warmup and in the decay.
TEST(LrScheduleTest, ResumeContinuesTheSchedule) {
  const std::vector<std::string> schedule = {
      "--lr",          "0.05", "--warmup-steps", "4",    "--lr-decay", "cosine",
      "--decay-steps", "10",   "--min-lr",       "0.005"};
  for (const char *name : {"quad", "shard2"}) {
    for (int64_t k : {2, 7}) {
      SCOPED_TRACE(std::string(name) + ", saved at step " + std::to_string(k));
      TempDir dir;
      const int64_t steps = 14;
      auto run = [&](std::vector<std::string> args) {
        args.insert(args.begin(), artifact(name));
        args.insert(args.end(), schedule.begin(), schedule.end());
        return runTool(args, dir);
      };
      RunResult whole = run(
          {"--steps", std::to_string(steps), "--log-json", dir.file("whole")});
      ASSERT_RAN(whole);
      RunResult first = run({"--steps", std::to_string(k), "--save",
                             dir.file("ck"), "--log-json", dir.file("first")});
      ASSERT_RAN(first);
      RunResult rest = run({"--steps", std::to_string(steps - k), "--resume",
                            dir.file("ck"), "--log-json", dir.file("rest")});
      ASSERT_RAN(rest);
      Logged all = readLog(dir.file("whole"));
      Logged before = readLog(dir.file("first"));
      Logged after = readLog(dir.file("rest"));
      ASSERT_EQ(all.lrs.size(), size_t(steps));
      ASSERT_EQ(before.lrs.size(), size_t(k));
      ASSERT_EQ(after.lrs.size(), size_t(steps - k));
      before.lrs.insert(before.lrs.end(), after.lrs.begin(), after.lrs.end());
      before.losses.insert(before.losses.end(), after.losses.begin(),
                           after.losses.end());
      EXPECT_EQ(before.lrs, all.lrs);
      EXPECT_EQ(before.losses, all.losses);
    }
  }
}

// Tests that every bad schedule option ends zshard-run with status 2, one
// exact error line (and the usage line for a bad command line) and nothing
// on stdout.
TEST(LrScheduleTest, BadOptionsGiveOneLine) {
  TempDir dir;
  std::string quad = artifact("quad");
  struct Case {
    std::vector<std::string> args;
    const char *message;
    bool usage;
  } cases[] = {
      {{quad, "--warmup-steps", "-1"},
       "--warmup-steps wants an integer >= 0, got '-1'",
       true},
      {{quad, "--warmup-steps", "x"},
       "--warmup-steps wants an integer >= 0, got 'x'",
       true},
      {{quad, "--lr-decay", "step"},
       "--lr-decay wants cosine, linear or constant, got 'step'",
       true},
      {{quad, "--lr-decay", "cosine", "--decay-steps", "0"},
       "--decay-steps wants an integer >= 1, got '0'",
       true},
      {{quad, "--lr-decay", "cosine", "--decay-steps", "5", "--min-lr", "-1"},
       "--min-lr wants a finite number >= 0, got '-1'",
       true},
      {{quad, "--lr-decay", "linear", "--decay-steps", "5", "--min-lr", "nan"},
       "--min-lr wants a finite number >= 0, got 'nan'",
       true},
      {{quad, "--decay-steps", "5"},
       "--decay-steps needs --lr-decay cosine or linear",
       true},
      {{quad, "--lr-decay", "constant", "--decay-steps", "5"},
       "--decay-steps needs --lr-decay cosine or linear",
       true},
      {{quad, "--min-lr", "0.0001"},
       "--min-lr needs --lr-decay cosine or linear",
       true},
      {{quad, "--lr-decay", "cosine"},
       "--lr-decay cosine needs --decay-steps S (nanoGPT's lr_decay_iters)",
       true},
      {{quad, "--lr-decay", "linear", "--warmup-steps", "5", "--decay-steps",
        "5"},
       "--decay-steps 5 must be above --warmup-steps 5",
       true},
      {{quad, "--lr-decay", "cosine", "--decay-steps", "5", "--min-lr", "0.1"},
       "--min-lr 0.1 is above the lr 0.001 (zshard-run's default)",
       false},
      {{quad, "--lr", "0.01", "--lr-decay", "cosine", "--decay-steps", "5",
        "--min-lr", "0.02"},
       "--min-lr 0.02 is above the lr 0.01 (--lr)",
       false},
      {{quad, "--warmup-steps", "2", "--warmup-steps", "3"},
       "--warmup-steps is given twice",
       true},
  };
  for (const Case &c : cases) {
    std::string trace;
    for (const std::string &arg : c.args)
      trace += " " + arg;
    SCOPED_TRACE(trace);
    RunResult r = runTool(c.args, dir);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(r.out, "");
    std::vector<std::string> err = lines(r.err);
    ASSERT_EQ(err.size(), c.usage ? 2u : 1u) << r.err;
    EXPECT_EQ(err[0], std::string("zshard-run: error: ") + c.message);
  }

  // A step without the hyper lr has nothing to schedule.
  Json m = quadManifest();
  m["arguments"].erase(2);
  for (size_t i = 0; i < m["arguments"].size(); ++i)
    m["arguments"][i]["index"] = i;
  for (size_t i = 0; i < m["results"].size(); ++i)
    m["results"][i]["index"] = i;
  setSignature(m);
  std::string nolr = writeArtifact(dir, "nolr", m);
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{nolr, "--warmup-steps", "3"},
        std::vector<std::string>{nolr, "--lr-decay", "cosine", "--decay-steps",
                                 "4"}}) {
    SCOPED_TRACE(args[1]);
    RunResult r = runTool(args, dir);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "zshard-run: error: " + nolr +
                         "/manifest.json: the step has no hyper 'lr' for " +
                         args[1] + " to schedule\n");
  }
}
