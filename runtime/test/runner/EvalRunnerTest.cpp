//===- EvalRunnerTest.cpp - zshard-run --eval-data on bad inputs ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The errors of --eval-data, --eval-every and --eval-steps, and of a
// manifest's "eval" (docs/runtime.md, "Evaluation"), on the hand-written
// quad artifact: one line each, exit status 2. What an eval computes is
// tested end to end with compiled steps (test/e2e/eval_checks.py).
//
//===----------------------------------------------------------------------===//

#include "ErrorCase.h"
#include "RunnerSupport.h"

#include <gtest/gtest.h>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

/// The signature of quad's eval entry: its arguments, then the loss alone.
std::string quadEvalSignature() {
  Json m = quadManifest();
  Json loss = m["results"][0];
  m["results"] = Json::array({loss});
  return manifestSignature(m);
}

/// The quad manifest with an "eval" entry (library relative to the
/// artifact unless absolute).
Json withEval(const std::string &library, const std::string &entry,
              const std::string &signature) {
  Json m = quadManifest();
  m["eval"] = {{"library", library},
               {"entry", entry},
               {"signature", signature},
               {"peak_bytes", 64}};
  return m;
}

} // namespace

// Tests the command-line errors of the eval options.
TEST(EvalRunnerTest, Usage) {
  auto args = [](std::vector<std::string> a) {
    return [a](const TempDir &) { return a; };
  };
  std::string quad = artifact("quad");
  ErrorCase cases[] = {
      {"eval every without eval data", args({quad, "--eval-every", "2"}),
       "--eval-every needs --eval-data", true},
      {"eval steps without eval data", args({quad, "--eval-steps", "4"}),
       "--eval-steps needs --eval-data", true},
      {"zero eval steps",
       args({quad, "--eval-data", "v.bin", "--eval-steps", "0"}),
       "--eval-steps wants an integer >= 1, got '0'", true},
      {"zero eval interval",
       args({quad, "--eval-data", "v.bin", "--eval-every", "0"}),
       "--eval-every wants an integer >= 1, got '0'", true},
      {"repeated eval data",
       args({quad, "--eval-data", "a.bin", "--eval-data", "b.bin"}),
       "--eval-data is given twice", true},
      {"eval data without a file", args({quad, "--eval-data="}),
       "--eval-data needs a file name", true},
  };
  for (ErrorCase &c : cases)
    expectError(c);
}

// Tests a manifest's "eval" and the eval library, as loaded.
TEST(EvalRunnerTest, Artifacts) {
  const std::string manifestAt = ".*/bad\\.zsa/manifest\\.json: ";
  std::string signature = quadEvalSignature();
  std::string quadLibrary = artifact("quad") + "/step.so";
  ErrorCase cases[] = {
      {"no eval entry",
       [](const TempDir &d) {
         return std::vector<std::string>{artifact("quad"), "--eval-data",
                                         d.file("v.bin")};
       },
       ".*/quad\\.zsa: --eval-data needs the artifact's eval entry, and it "
       "has none \\(compile the step with zshard-compile --eval\\)"},
      {"eval not an object",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["eval"] = 3;
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "eval: must be an object, got 3"},
      {"eval without a library",
       [&](const TempDir &d) {
         Json m = withEval("eval.so", "zshard_eval", signature);
         m["eval"].erase("library");
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "eval: missing field 'library'"},
      {"eval with an empty entry",
       [&](const TempDir &d) {
         return std::vector<std::string>{
             writeArtifact(d, "bad", withEval("eval.so", "", signature))};
       },
       manifestAt + "eval: field 'entry' is empty"},
      {"eval peak not an integer",
       [&](const TempDir &d) {
         Json m = withEval("eval.so", "zshard_eval", signature);
         m["eval"]["peak_bytes"] = "big";
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "eval: field 'peak_bytes' must be an integer, got "
                    "\"big\""},
      {"eval signature of other arguments",
       [&](const TempDir &d) {
         return std::vector<std::string>{writeArtifact(
             d, "bad", withEval("eval.so", "zshard_eval", "0123456789abcdef"))};
       },
       manifestAt +
           "eval: signature 0123456789abcdef does not match the "
           "arguments and the loss, whose signature is " +
           signature},
      {"eval library missing",
       [&](const TempDir &d) {
         return std::vector<std::string>{
             writeArtifact(d, "bad",
                           withEval("eval.so", "zshard_eval", signature)),
             "--eval-data", d.file("v.bin")};
       },
       ".*/bad\\.zsa/eval\\.so: eval library named by .*/bad\\.zsa/"
       "manifest\\.json is missing \\(No such file or directory\\)"},
      {"eval entry missing",
       [&](const TempDir &d) {
         return std::vector<std::string>{
             writeArtifact(d, "bad",
                           withEval(quadLibrary, "zshard_eval", signature)),
             "--eval-data", d.file("v.bin")};
       },
       ".*/quad\\.zsa/step\\.so: no entry 'zshard_eval' \\(named by the "
       "manifest\\): .*undefined symbol: zshard_eval"},
      {"eval library of another compilation",
       [&](const TempDir &d) {
         // quad's step library reports the step's signature, not the eval's.
         return std::vector<std::string>{
             writeArtifact(d, "bad",
                           withEval(quadLibrary, "zshard_step", signature)),
             "--eval-data", d.file("v.bin")};
       },
       ".*/quad\\.zsa/step\\.so: signature dbb7bd2d18a643f3 differs from " +
           signature +
           " in .*/bad\\.zsa/manifest\\.json \\(the library and the manifest "
           "come from different compilations\\)"},
  };
  for (ErrorCase &c : cases)
    expectError(c);
}

// An artifact whose eval library is missing still trains without
// --eval-data: the eval library is opened only to evaluate.
TEST(EvalRunnerTest, EvalLibraryOnlyOpenedToEvaluate) {
  TempDir dir;
  std::string art = writeArtifact(
      dir, "q", withEval("eval.so", "zshard_eval", quadEvalSignature()));
  RunResult r = runTool({art, "--steps", "2", "--quiet"}, dir);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(summaryOf(r)["steps"], 2);
}
