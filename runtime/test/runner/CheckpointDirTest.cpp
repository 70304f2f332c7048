//===- CheckpointDirTest.cpp - zshard-run --checkpoint-dir ----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Periodic checkpoints (--checkpoint-dir, --save-every, --keep,
// --save-format) and --resume auto on the hand-written quad step and the
// 3-rank shard step: what the directory holds, what a killed save leaves
// and the next run removes, and the command-line errors. The SIGKILL test of
// whole runs is test/e2e/kill_resume.py.
//
//===----------------------------------------------------------------------===//

#include "ErrorCase.h"
#include "RunnerSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <dirent.h>
#include <fstream>
#include <sys/stat.h>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

/// The names in directory \p path, sorted.
std::vector<std::string> listDir(const std::string &path) {
  std::vector<std::string> names;
  if (DIR *dir = opendir(path.c_str())) {
    while (dirent *entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..")
        names.push_back(name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> savedLines(const std::string &out) {
  std::vector<std::string> saved;
  for (const std::string &line : lines(out))
    if (line.rfind("checkpoint: ", 0) == 0)
      saved.push_back(line);
  return saved;
}

} // namespace

// Tests that --save-every N saves after every N-th step and after the last,
// that --keep 2 keeps the newest two, that each save is announced and
// D/latest names the newest, and that --resume auto continues from it with
// --steps as the step to end at: quad's losses 3 (1 - 2 lr)^(2 (s - 1)).
TEST(CheckpointDirTest, SavesKeepsAndResumes) {
  TempDir dir;
  std::string ck = dir.file("ck");
  RunResult first =
      runTool({artifact("quad"), "--steps", "7", "--lr", "0.1",
               "--checkpoint-dir", ck, "--save-every", "3", "--keep", "2"},
              dir);
  ASSERT_RAN(first);
  EXPECT_EQ(savedLines(first.out),
            (std::vector<std::string>{
                "checkpoint: step 3 saved in " + ck + "/step-00000003",
                "checkpoint: step 6 saved in " + ck + "/step-00000006",
                "checkpoint: step 7 saved in " + ck + "/step-00000007"}));
  EXPECT_EQ(listDir(ck), (std::vector<std::string>{"latest", "step-00000006",
                                                   "step-00000007"}));
  EXPECT_EQ(readText(ck + "/latest"), "step-00000007\n");
  EXPECT_EQ(listDir(ck + "/step-00000007"),
            std::vector<std::string>{"state.safetensors"});

  // A killed save left a staging directory: the next run removes it.
  ASSERT_EQ(mkdir((ck + "/.tmp-step-00000009").c_str(), 0755), 0);
  RunResult resumed = runTool(
      {artifact("quad"), "--steps", "10", "--lr", "0.1", "--checkpoint-dir", ck,
       "--resume", "auto", "--log-json", dir.file("resumed.jsonl"), "--quiet"},
      dir);
  ASSERT_RAN(resumed);
  EXPECT_EQ(summaryOf(resumed)["first_step"], 8);
  EXPECT_EQ(summaryOf(resumed)["last_step"], 10);
  std::vector<double> losses = loggedLosses(dir.file("resumed.jsonl"));
  ASSERT_EQ(losses.size(), 3u);
  for (size_t i = 0; i < losses.size(); ++i) {
    double s = double(8 + i);
    double want = 3 * std::pow(1 - 2 * 0.1, 2 * (s - 1));
    EXPECT_NEAR(losses[i], want, 1e-6 * want) << "step " << s;
  }
  // Without --save-every: only the last step; without --keep: all kept.
  EXPECT_EQ(listDir(ck),
            (std::vector<std::string>{"latest", "step-00000006",
                                      "step-00000007", "step-00000010"}));

  // Restarted once more it has nothing left to do.
  RunResult done =
      runTool({artifact("quad"), "--steps", "10", "--checkpoint-dir", ck,
               "--resume", "auto", "--quiet"},
              dir);
  ASSERT_RAN(done);
  EXPECT_EQ(summaryOf(done)["steps"], 0);
}

// Tests that --resume auto without a checkpoint starts fresh (here from
// --init-from), and that a sharded run writes rank files or one
// consolidated file as --save-format says, each resumed by --resume auto.
TEST(CheckpointDirTest, FormatsAndFreshStarts) {
  TempDir dir;
  std::string shard = artifact("shard3");
  RunResult init = runTool({shard, "--steps", "0", "--save-full",
                            dir.file("init.safetensors"), "--quiet"},
                           dir);
  ASSERT_RAN(init);
  std::string ck = dir.file("ck");
  RunResult fresh =
      runTool({shard, "--steps", "2", "--checkpoint-dir", ck, "--resume",
               "auto", "--init-from", dir.file("init.safetensors"), "--quiet"},
              dir);
  ASSERT_RAN(fresh);
  EXPECT_EQ(summaryOf(fresh)["first_step"], 1);
  EXPECT_EQ(listDir(ck + "/step-00000002"),
            (std::vector<std::string>{"state.rank0-of-3.safetensors",
                                      "state.rank1-of-3.safetensors",
                                      "state.rank2-of-3.safetensors"}));
  RunResult full =
      runTool({shard, "--steps", "4", "--checkpoint-dir", ck, "--resume",
               "auto", "--save-format", "full", "--quiet"},
              dir);
  ASSERT_RAN(full);
  EXPECT_EQ(summaryOf(full)["first_step"], 3);
  EXPECT_EQ(listDir(ck + "/step-00000004"),
            std::vector<std::string>{"state.safetensors"});
  RunResult again = runTool({shard, "--steps", "5", "--checkpoint-dir", ck,
                             "--resume", "auto", "--quiet"},
                            dir);
  ASSERT_RAN(again);
  EXPECT_EQ(summaryOf(again)["first_step"], 5);
}

// Tests the errors of --checkpoint-dir and --resume auto.
TEST(CheckpointDirTest, Errors) {
  std::string quad = artifact("quad");
  auto args = [](std::vector<std::string> a) {
    return [a](const TempDir &) { return a; };
  };
  ErrorCase cases[] = {
      {"save-every without a directory", args({quad, "--save-every", "2"}),
       "--save-every needs --checkpoint-dir", true},
      {"keep without a directory", args({quad, "--keep", "2"}),
       "--keep needs --checkpoint-dir", true},
      {"format without a directory", args({quad, "--save-format", "full"}),
       "--save-format needs --checkpoint-dir", true},
      {"bad format",
       args({quad, "--checkpoint-dir", "ck", "--save-format", "zip"}),
       "--save-format wants rank or full, got 'zip'", true},
      {"zero save-every",
       args({quad, "--checkpoint-dir", "ck", "--save-every", "0"}),
       "--save-every wants an integer >= 1, got '0'", true},
      {"auto without a directory", args({quad, "--resume", "auto"}),
       "--resume auto needs --checkpoint-dir \\(the directory whose newest "
       "checkpoint it continues from\\)",
       true},
      {"auto and resume-full",
       args({quad, "--checkpoint-dir", "ck", "--resume", "auto",
             "--resume-full", "f.safetensors"}),
       "--resume auto and --resume-full exclude each other", true},
      {"directory is a file",
       [&](const TempDir &d) {
         std::ofstream(d.file("file")) << "x";
         return std::vector<std::string>{quad, "--checkpoint-dir",
                                         d.file("file")};
       },
       ".*/file: --checkpoint-dir is not a directory"},
  };
  for (ErrorCase &c : cases)
    expectError(c);
}
