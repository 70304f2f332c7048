//===- RunnerOptionsTest.cpp - zshard-run's options at work ---------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The lr an artifact records, --data on steps whose batch has other names
// than zshard-gen's, and the --help text against the options zshard-run
// accepts.
//
//===----------------------------------------------------------------------===//

#include "RunnerSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

/// Every option zshard-run accepts.
const std::vector<std::string> acceptedOptions = {"--ranks",
                                                  "--backend",
                                                  "--device",
                                                  "--steps",
                                                  "--lr",
                                                  "--warmup-steps",
                                                  "--lr-decay",
                                                  "--decay-steps",
                                                  "--min-lr",
                                                  "--seed",
                                                  "--data",
                                                  "--data-dtype",
                                                  "--data-inputs",
                                                  "--eval-data",
                                                  "--eval-every",
                                                  "--eval-steps",
                                                  "--batch-file",
                                                  "--init-from",
                                                  "--resume",
                                                  "--resume-full",
                                                  "--save",
                                                  "--save-full",
                                                  "--save-torch",
                                                  "--checkpoint-dir",
                                                  "--save-every",
                                                  "--keep",
                                                  "--save-format",
                                                  "--log-json",
                                                  "--log",
                                                  "--stop-on-nan",
                                                  "--trace",
                                                  "--memory-timeline",
                                                  "--memory-timeline-step",
                                                  "--link-gbps",
                                                  "--link-latency-us",
                                                  "--threads",
                                                  "--quiet",
                                                  "--help",
                                                  "--version"};

std::set<std::string> optionsIn(const std::string &text) {
  std::set<std::string> out;
  std::regex option("--[a-z][a-z0-9-]*");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), option);
       it != std::sregex_iterator(); ++it)
    out.insert(it->str());
  return out;
}

/// The tokens step's data: a stream of ids below its vocabulary of 16.
std::string writeTokens(const TempDir &dir) {
  std::vector<uint16_t> tokens(300);
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = uint16_t((i * 5 + i / 7) % 16);
  writeVector(dir.file("train.bin"), tokens);
  return dir.file("train.bin");
}

} // namespace

// Tests that the lr the artifact records (the hyper's "default", as the
// exporter writes the optimizer's lr) is the run's lr unless --lr is given,
// and that the header and the JSON summary say which lr the run used. quad's
// losses are 3 (1 - 2 lr)^(2 (s - 1)).
TEST(RunnerOptionsTest, LrFromTheArtifactUnlessGiven) {
  TempDir dir;
  Json m = quadManifest();
  m["arguments"][2]["default"] = 0.25;
  std::string recorded = writeArtifact(dir, "recorded", m);
  struct Case {
    std::vector<std::string> args;
    double lr;
    const char *source, *header;
  } cases[] = {{{recorded}, 0.25, "artifact", "; lr 0.25 (the artifact's); "},
               {{recorded, "--lr", "0.1"}, 0.1, "--lr", "; lr 0.1 (--lr); "},
               {{artifact("quad")},
                0.001,
                "default",
                "; lr 0.001 (zshard-run's default); "}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.source);
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--steps", "2", "--log-json", dir.file("l")});
    RunResult r = runTool(args, dir);
    ASSERT_RAN(r);
    EXPECT_NE(r.err.find(c.header), std::string::npos) << r.err;
    Json summary = summaryOf(r);
    EXPECT_EQ(summary["lr"].get<double>(), c.lr);
    EXPECT_EQ(summary["lr_source"], c.source);
    std::vector<double> losses = loggedLosses(dir.file("l"));
    ASSERT_EQ(losses.size(), 2u);
    double want = 3 * std::pow(1 - 2 * c.lr, 2);
    EXPECT_NEAR(losses[1], want, 1e-6 * want);
  }
}

// Tests --data on the tokens step under nanoGPT's names (idx, targets,
// transformer.wte.weight: found by name) and under names nothing guesses
// (ids, next: --data-inputs ids,next): every row is a window and its
// successor within the vocabulary, or the step's loss would jump by 1000.
// nanoGPT's names also get synthetic data without --data.
TEST(RunnerOptionsTest, DataFeedsTheStepsBatchNames) {
  TempDir dir;
  std::string tokens = writeTokens(dir);
  for (std::vector<std::string> args :
       {std::vector<std::string>{artifact("tokens-idx"), "--data", tokens},
        std::vector<std::string>{artifact("tokens-named"), "--data", tokens,
                                 "--data-inputs", "ids,next"},
        std::vector<std::string>{artifact("tokens-idx")}}) {
    SCOPED_TRACE(args[0] + (args.size() > 1 ? " " + args.back() : ""));
    args.insert(args.end(), {"--steps", "20", "--log-json", dir.file("l")});
    RunResult r = runTool(args, dir);
    ASSERT_RAN(r);
    for (double loss : loggedLosses(dir.file("l"))) {
      EXPECT_GE(loss, 0.0);
      EXPECT_LT(loss, 1.5 * 15);
    }
    // B T = 16 tokens a step, also in each --log-json line.
    EXPECT_NE(lines(r.out).front().find("tok/s"), std::string::npos) << r.out;
    for (const std::string &line : lines(readText(dir.file("l")))) {
      Json record = Json::parse(line);
      double seconds = record["ms"].get<double>() / 1e3;
      ASSERT_TRUE(record.contains("tokens_per_s")) << line;
      EXPECT_NEAR(record["tokens_per_s"].get<double>() * seconds, 16.0, 1e-6)
          << line;
    }
  }
  // A step without tokens or samples logs steps per second.
  RunResult quad = runTool({artifact("quad"), "--steps", "2", "--log-json",
                            dir.file("q"), "--quiet"},
                           dir);
  ASSERT_RAN(quad);
  for (const std::string &line : lines(readText(dir.file("q")))) {
    Json record = Json::parse(line);
    EXPECT_FALSE(record.contains("tokens_per_s")) << line;
    EXPECT_NEAR(record["steps_per_s"].get<double>() *
                    record["ms"].get<double>() / 1e3,
                1.0, 1e-6)
        << line;
  }
}

// Tests that --help lists every option zshard-run accepts and nothing else,
// that the usage line names every option but --help and --version, and that
// the parser knows each of them.
TEST(RunnerOptionsTest, HelpListsEveryAcceptedOption) {
  TempDir dir;
  RunResult help = runTool({"--help"}, dir);
  ASSERT_RAN(help);
  std::set<std::string> accepted(acceptedOptions.begin(),
                                 acceptedOptions.end());
  EXPECT_EQ(optionsIn(help.out), accepted) << help.out;
  EXPECT_NE(help.out.find("-h,"), std::string::npos);

  RunResult none = runTool({}, dir);
  EXPECT_EQ(none.exitCode, 2);
  std::vector<std::string> err = lines(none.err);
  ASSERT_EQ(err.size(), 2u) << none.err;
  EXPECT_EQ(err[0], "zshard-run: error: no artifact given");
  std::set<std::string> usage = optionsIn(err[1]);
  accepted.erase("--help");
  accepted.erase("--version");
  EXPECT_EQ(usage, accepted) << err[1];

  for (const std::string &option : acceptedOptions) {
    RunResult r = runTool({option}, dir);
    EXPECT_EQ(r.err.find("unknown option"), std::string::npos)
        << option << ": " << r.err;
  }
}
