//===- ShardedRunnerTest.cpp - zshard-run on sharded artifacts ------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard-run on the hand-written sharded step of test/steps/shard.c: the
// same model as shard1.zsa, shard2.zsa, shard3.zsa (1, 2 and 3 ranks) and
// shard-unsharded.zsa (an ordinary single-rank step). Every rank count must
// build the same model, see the same global batches, follow the unsharded
// run (to the rounding of the averages over ranks), and read and write the
// same consolidated checkpoints; rank files must resume bit for bit.
//
// The Mpi* tests run zshard-run under mpiexec (runtime.sharded.mpi); the
// others on the local backend (runtime.sharded).
//
//===----------------------------------------------------------------------===//

#include "RunnerSupport.h"

#include "io/Safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <regex>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

/// The artifact of the shard step on \p ranks ranks; 0: the unsharded one.
std::string shardArtifact(int ranks) {
  return artifact(ranks == 0 ? "shard-unsharded"
                             : "shard" + std::to_string(ranks));
}

/// The tensors of a safetensors file, as f32 values by name.
std::map<std::string, std::vector<float>> tensorsOf(const std::string &path) {
  SafetensorsFile file = SafetensorsFile::read(path);
  std::map<std::string, std::vector<float>> out;
  for (const TensorView &t : file.tensors()) {
    EXPECT_EQ(t.dtype, DType::F32) << t.name;
    std::vector<float> values(t.elements);
    std::memcpy(values.data(), t.data, t.bytes);
    out[t.name] = values;
  }
  return out;
}

/// (name, shape) of every tensor, in file order.
std::vector<std::pair<std::string, std::vector<int64_t>>>
layoutOf(const std::string &path) {
  SafetensorsFile file = SafetensorsFile::read(path);
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  for (const TensorView &t : file.tensors())
    out.emplace_back(t.name, t.shape);
  return out;
}

/// Expects the same tensors, equal to a relative tolerance \p tolerance
/// (0: bit for bit).
void expectSameTensors(const std::string &a, const std::string &b,
                       double tolerance) {
  std::map<std::string, std::vector<float>> ta = tensorsOf(a),
                                            tb = tensorsOf(b);
  ASSERT_EQ(ta.size(), tb.size());
  for (const auto &[name, values] : ta) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(tb.count(name));
    const std::vector<float> &other = tb[name];
    ASSERT_EQ(values.size(), other.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (tolerance == 0)
        EXPECT_EQ(values[i], other[i]) << "element " << i;
      else
        EXPECT_NEAR(values[i], other[i],
                    tolerance * std::max(1.0f, std::fabs(values[i])))
            << "element " << i;
    }
  }
}

void expectNearLosses(const std::vector<double> &want,
                      const std::vector<double> &got, double tolerance) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tolerance * std::fabs(want[i]))
        << "step " << i + 1;
}

/// The names and shapes an unsharded run saves.
const std::vector<std::pair<std::string, std::vector<int64_t>>> fullLayout = {
    {"h.0.w", {2, 3}},         {"h.0.b", {6}},         {"ln.g", {3}},
    {"h.0.w.exp_avg", {2, 3}}, {"h.0.b.exp_avg", {6}}, {"h.0.w.master", {2, 3}},
    {"h.0.b.master", {6}},     {"ln.g.exp_avg", {3}}};

/// A global batch file: x [6, 2] and target [6, 1], with a step axis of
/// \p steps entries when \p steps > 0.
void writeBatchFile(const std::string &path, int steps) {
  int entries = steps > 0 ? steps : 1;
  std::vector<float> x(size_t(entries) * 12), target(size_t(entries) * 6);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.7f * float(i));
  for (size_t i = 0; i < target.size(); ++i)
    target[i] = std::cos(1.3f * float(i));
  std::vector<int64_t> xShape = {6, 2}, tShape = {6, 1};
  if (steps > 0) {
    xShape.insert(xShape.begin(), steps);
    tShape.insert(tShape.begin(), steps);
  }
  writeSafetensors(path,
                   {{"x", DType::F32, xShape, x.data()},
                    {"target", DType::F32, tShape, target.data()}},
                   {});
}

/// Runs the shard step on \p ranks ranks (0: unsharded) with \p extra
/// arguments, logging losses to <tag>.jsonl and saving the consolidated
/// state to <tag>.safetensors.
RunResult runShard(const TempDir &dir, int ranks, const std::string &tag,
                   std::vector<std::string> extra) {
  std::vector<std::string> args = {shardArtifact(ranks),
                                   "--lr",
                                   "0.05",
                                   "--log-json",
                                   dir.file(tag + ".jsonl"),
                                   ranks == 0 ? "--save" : "--save-full",
                                   dir.file(tag + ".safetensors")};
  args.insert(args.end(), extra.begin(), extra.end());
  return runTool(args, dir);
}

} // namespace

// Tests that 1, 2 and 3 ranks build exactly the unsharded model (the
// consolidated state at step 0 is bit for bit the unsharded run's), then
// follow the unsharded run: the mean of the ranks' losses and the
// consolidated state after 5 steps agree to float rounding. Checks the
// output lines, the summary (ranks, backend, exact per-rank peaks) and that
// --save-full writes exactly the names and shapes of an unsharded --save.
TEST(ShardedRunnerTest, EveryRankCountFollowsTheUnshardedRun) {
  TempDir dir;
  for (int ranks : {0, 1, 2, 3}) {
    SCOPED_TRACE("ranks " + std::to_string(ranks));
    std::string tag = "init" + std::to_string(ranks);
    RunResult r = runShard(dir, ranks, tag, {"--steps", "0", "--quiet"});
    ASSERT_RAN(r);
    EXPECT_EQ(layoutOf(dir.file(tag + ".safetensors")), fullLayout);
    if (ranks > 0)
      expectSameTensors(dir.file("init0.safetensors"),
                        dir.file(tag + ".safetensors"), 0);
  }
  std::map<std::string, std::vector<float>> init =
      tensorsOf(dir.file("init0.safetensors"));
  EXPECT_EQ(init["h.0.w.master"], init["h.0.w"]);
  EXPECT_EQ(init["h.0.b.exp_avg"], std::vector<float>(6, 0.0f));
  EXPECT_EQ(init["ln.g"], std::vector<float>(3, 1.0f));

  RunResult unsharded = runShard(dir, 0, "run0", {"--steps", "5"});
  ASSERT_RAN(unsharded);
  std::vector<double> want = loggedLosses(dir.file("run0.jsonl"));
  ASSERT_EQ(want.size(), 5u);
  for (int ranks : {1, 2, 3}) {
    SCOPED_TRACE("ranks " + std::to_string(ranks));
    std::string tag = "run" + std::to_string(ranks);
    RunResult r = runShard(dir, ranks, tag, {"--steps", "5"});
    ASSERT_RAN(r);
    std::vector<double> got = loggedLosses(dir.file(tag + ".jsonl"));
    expectNearLosses(want, got, 1e-5);
    expectSameTensors(dir.file("run0.safetensors"),
                      dir.file(tag + ".safetensors"), 1e-5);
    EXPECT_EQ(layoutOf(dir.file(tag + ".safetensors")), fullLayout);

    // One line per step, from rank 0 only, with the global batch's rate.
    std::vector<std::string> out = lines(r.out);
    ASSERT_EQ(out.size(), 6u) << r.out;
    std::regex stepLine(R"(step ([0-9]+)/5  loss ([0-9.]+)  samples/s [0-9]+)");
    for (int s = 1; s <= 5; ++s) {
      std::smatch match;
      ASSERT_TRUE(std::regex_match(out[size_t(s - 1)], match, stepLine))
          << out[size_t(s - 1)];
      EXPECT_NEAR(std::stod(match[2]), got[size_t(s - 1)], 1e-6);
    }
    Json summary = summaryOf(r);
    EXPECT_EQ(summary["ranks"], ranks);
    EXPECT_EQ(summary["backend"], "local");
    EXPECT_EQ(summary["final_loss"].get<double>(), got.back());
    EXPECT_GT(summary["sgemm_fraction"].get<double>(), 0.0);
    // Per rank: the shard buffers (argument and result) of h.0 and its two
    // slots, ln.g and its exp_avg replicated; the batch rows and the step's
    // two padded buffers and its sgemm accumulator; lr, step and the loss.
    int64_t shard = (13 + ranks - 1) / ranks, rows = 6 / ranks;
    Json peaks = summary["rank_peak_bytes"];
    ASSERT_EQ(peaks.size(), size_t(ranks));
    for (const Json &rank : peaks) {
      EXPECT_EQ(rank["parameters"], 2 * 4 * (shard + 3));
      EXPECT_EQ(rank["optimizer_state"], 2 * 4 * (2 * shard + 3));
      EXPECT_EQ(rank["activations"], 4 * (3 * rows + 2 * shard * ranks + 1));
      EXPECT_EQ(rank["other"], 12);
      EXPECT_EQ(rank["communication"], 0);
      EXPECT_EQ(rank["total"], rank["parameters"].get<int64_t>() +
                                   rank["optimizer_state"].get<int64_t>() +
                                   rank["activations"].get<int64_t>() + 12);
    }
    EXPECT_EQ(summary["peak_bytes"], peaks[0]);
    EXPECT_NE(r.err.find(std::to_string(ranks) + " ranks (grid 'world' [" +
                         std::to_string(ranks) + "], local backend)"),
              std::string::npos)
        << r.err;
  }
  // --ranks, when given, names the artifact's rank count.
  RunResult explicitRanks =
      runTool({shardArtifact(3), "--ranks", "3", "--steps", "2", "--quiet",
               "--backend", "local"},
              dir);
  ASSERT_RAN(explicitRanks);
}

// Tests that a global batch file gives every rank count the unsharded run's
// batches: rank r takes rows [r B, (r + 1) B) of each entry.
TEST(ShardedRunnerTest, BatchFileHoldsTheGlobalBatch) {
  TempDir dir;
  for (int steps : {0, 3}) {
    SCOPED_TRACE("step axis " + std::to_string(steps));
    writeBatchFile(dir.file("batch.safetensors"), steps);
    std::vector<std::string> args = {"--steps", "4", "--quiet", "--batch-file",
                                     dir.file("batch.safetensors")};
    ASSERT_RAN(runShard(dir, 0, "u", args));
    std::vector<double> want = loggedLosses(dir.file("u.jsonl"));
    for (int ranks : {2, 3}) {
      SCOPED_TRACE("ranks " + std::to_string(ranks));
      ASSERT_RAN(runShard(dir, ranks, "s", args));
      expectNearLosses(want, loggedLosses(dir.file("s.jsonl")), 1e-5);
      expectSameTensors(dir.file("u.safetensors"), dir.file("s.safetensors"),
                        1e-5);
    }
  }
}

// Tests that 6 steps equal 3 steps, --save (one file per rank), --resume
// and 3 more, bit for bit: losses, every rank file and the consolidated
// file; with synthetic data and with a batch file. Checks the rank files'
// tensors (the rank's arguments) and metadata.
TEST(ShardedRunnerTest, RankFilesResumeBitForBit) {
  TempDir dir;
  writeBatchFile(dir.file("batch.safetensors"), 5);
  for (bool batchFile : {false, true}) {
    SCOPED_TRACE(batchFile ? "batch file" : "synthetic");
    auto run = [&](const std::string &tag, std::vector<std::string> extra) {
      std::vector<std::string> args = {"--quiet", "--seed", "3", "--save",
                                       dir.file(tag)};
      if (batchFile)
        args.insert(args.end(),
                    {"--batch-file", dir.file("batch.safetensors")});
      args.insert(args.end(), extra.begin(), extra.end());
      RunResult r = runShard(dir, 3, tag, args);
      EXPECT_EQ(r.exitCode, 0) << r.err;
      return r;
    };
    run("whole", {"--steps", "6"});
    run("first", {"--steps", "3"});
    RunResult second =
        run("second", {"--steps", "3", "--resume", dir.file("first")});
    EXPECT_EQ(summaryOf(second)["first_step"], 4);
    std::vector<double> whole = loggedLosses(dir.file("whole.jsonl"));
    std::vector<double> parts = loggedLosses(dir.file("first.jsonl"));
    std::vector<double> rest = loggedLosses(dir.file("second.jsonl"));
    parts.insert(parts.end(), rest.begin(), rest.end());
    EXPECT_EQ(whole, parts);
    for (int r = 0; r < 3; ++r) {
      std::string suffix = ".rank" + std::to_string(r) + "-of-3.safetensors";
      EXPECT_EQ(readFileBytes(dir.file("whole" + suffix)),
                readFileBytes(dir.file("second" + suffix)))
          << suffix;
    }
    EXPECT_EQ(readFileBytes(dir.file("whole.safetensors")),
              readFileBytes(dir.file("second.safetensors")));
  }

  // A rank file: the rank's arguments by name, and where it belongs.
  SafetensorsFile rank1 =
      SafetensorsFile::read(dir.file("whole.rank1-of-3.safetensors"));
  std::vector<std::pair<std::string, std::vector<int64_t>>> want = {
      {"h.0", {5}},
      {"ln.g", {3}},
      {"h.0.exp_avg", {5}},
      {"h.0.master", {5}},
      {"ln.g.exp_avg", {3}}};
  EXPECT_EQ(layoutOf(dir.file("whole.rank1-of-3.safetensors")), want);
  EXPECT_EQ(*rank1.findMetadata("step"), "6");
  EXPECT_EQ(*rank1.findMetadata("rank"), "1");
  EXPECT_EQ(*rank1.findMetadata("ranks"), "3");
  EXPECT_EQ(*rank1.findMetadata("model"), "shard");
  EXPECT_EQ(*rank1.findMetadata("signature"), "af88875e1df5d5ae");
  Json layout = Json::parse(*rank1.findMetadata("layout"));
  EXPECT_EQ(layout["grid"], Json::array({3}));
  EXPECT_EQ(layout["units"][0]["shard_size"], 5);
  // Rank 1 holds flat elements [5, 10): h.0.w[5], the gap, h.0.b[0..3).
  std::map<std::string, std::vector<float>> full =
      tensorsOf(dir.file("whole.safetensors"));
  std::vector<float> shard =
      tensorsOf(dir.file("whole.rank1-of-3.safetensors"))["h.0"];
  ASSERT_EQ(shard.size(), 5u);
  EXPECT_EQ(shard[0], full["h.0.w"][5]);
  EXPECT_EQ(shard[1], 0.0f);
  EXPECT_EQ(shard[2], full["h.0.b"][0]);
  EXPECT_EQ(shard[4], full["h.0.b"][2]);
}

// Tests re-sharding through consolidated files: 3 ranks save-full, then 2
// ranks, 1 rank and the unsharded step resume from it and follow the
// 3-rank run to float rounding; loading and saving again at step 0 gives
// the same tensors bit for bit; --init-from of parameters alone starts the
// optimizer state from its init specs (master copies the loaded params).
TEST(ShardedRunnerTest, ConsolidatedFilesReshardToAnyRankCount) {
  TempDir dir;
  ASSERT_RAN(runShard(dir, 3, "whole", {"--steps", "6", "--quiet"}));
  ASSERT_RAN(runShard(dir, 3, "first", {"--steps", "3", "--quiet"}));
  std::vector<double> whole = loggedLosses(dir.file("whole.jsonl"));
  std::vector<double> tail(whole.begin() + 3, whole.end());
  for (int ranks : {0, 1, 2}) {
    SCOPED_TRACE("ranks " + std::to_string(ranks));
    // The unsharded step's --resume reads consolidated files too.
    RunResult r = runShard(dir, ranks, "rest",
                           {"--steps", "3", "--quiet",
                            ranks == 0 ? "--resume" : "--resume-full",
                            dir.file("first.safetensors")});
    ASSERT_RAN(r);
    EXPECT_EQ(summaryOf(r)["first_step"], 4);
    expectNearLosses(tail, loggedLosses(dir.file("rest.jsonl")), 1e-5);
    expectSameTensors(dir.file("whole.safetensors"),
                      dir.file("rest.safetensors"), 1e-5);

    ASSERT_RAN(runShard(dir, ranks, "again",
                        {"--steps", "0", "--quiet", "--init-from",
                         dir.file("first.safetensors")}));
    expectSameTensors(dir.file("first.safetensors"),
                      dir.file("again.safetensors"), 0);
  }

  // Parameters alone: exp_avg from zeros, master from the parameters.
  std::map<std::string, std::vector<float>> first =
      tensorsOf(dir.file("first.safetensors"));
  writeSafetensors(dir.file("params.safetensors"),
                   {{"h.0.w", DType::F32, {2, 3}, first["h.0.w"].data()},
                    {"h.0.b", DType::F32, {6}, first["h.0.b"].data()},
                    {"ln.g", DType::F32, {3}, first["ln.g"].data()}},
                   {});
  ASSERT_RAN(runShard(dir, 2, "p",
                      {"--steps", "0", "--quiet", "--init-from",
                       dir.file("params.safetensors")}));
  std::map<std::string, std::vector<float>> p =
      tensorsOf(dir.file("p.safetensors"));
  EXPECT_EQ(p["h.0.w"], first["h.0.w"]);
  EXPECT_EQ(p["h.0.b.master"], first["h.0.b"]);
  EXPECT_EQ(p["h.0.w.exp_avg"], std::vector<float>(6, 0.0f));
  EXPECT_EQ(p["ln.g.exp_avg"], std::vector<float>(3, 0.0f));
}

namespace {

struct ErrorCase {
  const char *name;
  std::function<std::vector<std::string>(const TempDir &)> setup;
  std::string message; ///< ECMAScript regex after "zshard-run: error: ".
};

void expectError(const ErrorCase &c) {
  SCOPED_TRACE(c.name);
  TempDir dir;
  RunResult r = runTool(c.setup(dir), dir);
  EXPECT_EQ(r.exitCode, 2) << "stdout:\n" << r.out << "stderr:\n" << r.err;
  EXPECT_EQ(r.out, "") << "nothing on stdout after an error";
  std::vector<std::string> err = lines(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  const std::string prefix = "zshard-run: error: ";
  ASSERT_EQ(err[0].rfind(prefix, 0), 0u) << err[0];
  std::string message = err[0].substr(prefix.size());
  EXPECT_TRUE(std::regex_match(message, std::regex(c.message)))
      << "got:  " << message << "\nwant: " << c.message;
}

/// Saves rank files of \p steps steps of the 3-rank step at <dir>/<name>.
void saveRankFiles(const TempDir &dir, const std::string &name, int steps) {
  RunResult r = runTool({shardArtifact(3), "--steps", std::to_string(steps),
                         "--quiet", "--save", dir.file(name)},
                        dir);
  if (r.exitCode != 0)
    std::abort();
}

void copyFile(const std::string &from, const std::string &to) {
  std::vector<unsigned char> bytes = readFileBytes(from);
  writeBytes(to, bytes.data(), bytes.size());
}

} // namespace

// Tests the errors of sharded runs: each one line, exit status 2, from every
// rank alike (one message, not one per rank).
TEST(ShardedRunnerTest, Errors) {
  const std::string manifestAt = ".*/shard3\\.zsa/manifest\\.json: ";
  ErrorCase cases[] = {
      {"rank count",
       [](const TempDir &) {
         return std::vector<std::string>{shardArtifact(3), "--ranks", "2"};
       },
       manifestAt + "the artifact is compiled for 3 ranks \\(grid 'world' "
                    "\\[3\\]\\), and --ranks 2 \\(compile it for 2 ranks, or "
                    "run it with --ranks 3\\)"},
      {"ranks of an unsharded artifact",
       [](const TempDir &) {
         return std::vector<std::string>{shardArtifact(0), "--ranks", "2"};
       },
       ".*/shard-unsharded\\.zsa/manifest\\.json: the artifact is "
       "single-rank \\(ranks 1, no grid\\), and --ranks 2: compile it for 2 "
       "ranks to run it sharded"},
      {"missing rank file",
       [](const TempDir &d) {
         saveRankFiles(d, "c", 2);
         std::remove(d.file("c.rank2-of-3.safetensors").c_str());
         return std::vector<std::string>{shardArtifact(3), "--resume",
                                         d.file("c")};
       },
       ".*/c\\.rank2-of-3\\.safetensors: no such rank file \\(--resume of a "
       "sharded run reads the files --save wrote, one per rank, for the same "
       "rank count\\)"},
      {"consolidated file given to --resume",
       [](const TempDir &d) {
         RunResult r = runTool({shardArtifact(3), "--steps", "1", "--quiet",
                                "--save-full", d.file("f.safetensors")},
                               d);
         if (r.exitCode != 0)
           std::abort();
         return std::vector<std::string>{shardArtifact(3), "--resume",
                                         d.file("f.safetensors")};
       },
       ".*/f\\.rank0-of-3\\.safetensors: no such rank file .*; "
       ".*/f\\.safetensors itself loads with --resume-full\\)"},
      {"rank files of another rank count",
       [](const TempDir &d) {
         saveRankFiles(d, "c", 1);
         for (int r = 0; r < 2; ++r)
           copyFile(d.file("c.rank" + std::to_string(r) + "-of-3.safetensors"),
                    d.file("c.rank" + std::to_string(r) + "-of-2.safetensors"));
         return std::vector<std::string>{shardArtifact(2), "--resume",
                                         d.file("c")};
       },
       ".*/c\\.rank0-of-2\\.safetensors: written by a run of 3 ranks, and "
       "this run has 2 \\(--save-full and --resume-full change the rank "
       "count\\)"},
      {"rank file of another rank",
       [](const TempDir &d) {
         saveRankFiles(d, "c", 1);
         copyFile(d.file("c.rank0-of-3.safetensors"),
                  d.file("c.rank1-of-3.safetensors"));
         return std::vector<std::string>{shardArtifact(3), "--resume",
                                         d.file("c")};
       },
       ".*/c\\.rank1-of-3\\.safetensors: holds rank 0, not rank 1"},
      {"rank files of different steps",
       [](const TempDir &d) {
         saveRankFiles(d, "a", 1);
         saveRankFiles(d, "b", 2);
         copyFile(d.file("b.rank2-of-3.safetensors"),
                  d.file("a.rank2-of-3.safetensors"));
         return std::vector<std::string>{shardArtifact(3), "--resume",
                                         d.file("a")};
       },
       ".*/a: the rank files disagree on the step: rank 0 saved step 1, "
       "rank 2 step 2"},
      {"another unit layout",
       [](const TempDir &d) {
         saveRankFiles(d, "c", 1);
         // The same arguments (and signature), h.0.b one element earlier.
         Json m = Json::parse(readText(shardArtifact(3) + "/manifest.json"));
         m["units"][0]["members"][1]["offset"] = 6;
         m["library"] = shardArtifact(3) + "/step.so";
         std::string path = d.file("moved.zsa");
         std::string command = "mkdir -p " + shellQuote(path);
         if (std::system(command.c_str()) != 0)
           std::abort();
         std::ofstream(path + "/manifest.json") << m.dump();
         return std::vector<std::string>{path, "--resume", d.file("c")};
       },
       ".*/c\\.rank0-of-3\\.safetensors: written for another unit layout "
       "than this artifact's \\(--save-full and --resume-full change the "
       "layout\\)"},
      {"rank file with a wrong shape",
       [](const TempDir &d) {
         saveRankFiles(d, "c", 1);
         SafetensorsFile file =
             SafetensorsFile::read(d.file("c.rank1-of-3.safetensors"));
         std::vector<TensorToWrite> tensors;
         std::vector<float> big(6, 1.0f);
         for (const TensorView &t : file.tensors())
           tensors.push_back(
               t.name == "h.0.master"
                   ? TensorToWrite{t.name, t.dtype, {6}, big.data()}
                   : TensorToWrite{t.name, t.dtype, t.shape, t.data});
         // A hand-edited file: keep the metadata but the stale checksum.
         std::vector<std::pair<std::string, std::string>> metadata;
         for (const auto &entry : file.metadata())
           if (entry.first != checksumKey)
             metadata.push_back(entry);
         writeSafetensors(d.file("c.rank1-of-3.safetensors"), tensors,
                          metadata);
         return std::vector<std::string>{shardArtifact(3), "--resume",
                                         d.file("c")};
       },
       ".*/c\\.rank1-of-3\\.safetensors: tensor 'h\\.0\\.master' has shape "
       "\\[6\\], but opt_state_shard 'h\\.0\\.master' \\(f32 \\[5\\]\\) does "
       "not"},
      {"consolidated file with a wrong shape",
       [](const TempDir &d) {
         std::vector<float> values(6, 0.5f);
         writeSafetensors(d.file("p.safetensors"),
                          {{"h.0.w", DType::F32, {3, 2}, values.data()},
                           {"h.0.b", DType::F32, {6}, values.data()},
                           {"ln.g", DType::F32, {3}, values.data()}},
                          {});
         return std::vector<std::string>{shardArtifact(2), "--init-from",
                                         d.file("p.safetensors")};
       },
       ".*/p\\.safetensors: tensor 'h\\.0\\.w' has shape \\[3, 2\\], but "
       "param 'h\\.0\\.w' \\(f32 \\[2, 3\\], in unit 'h\\.0'\\) does not"},
      {"consolidated file without a member",
       [](const TempDir &d) {
         std::vector<float> values(6, 0.5f);
         writeSafetensors(d.file("p.safetensors"),
                          {{"h.0.w", DType::F32, {2, 3}, values.data()},
                           {"ln.g", DType::F32, {3}, values.data()}},
                          {{"step", "2"}});
         return std::vector<std::string>{shardArtifact(2), "--resume-full",
                                         d.file("p.safetensors")};
       },
       ".*/p\\.safetensors: no tensor for param 'h\\.0\\.b' \\(f32 \\[6\\], "
       "in unit 'h\\.0'\\) \\(a --resume file holds every param and "
       "opt_state\\)"},
      {"rank file given to --resume-full",
       [](const TempDir &d) {
         saveRankFiles(d, "c", 1);
         return std::vector<std::string>{shardArtifact(3), "--resume-full",
                                         d.file("c.rank0-of-3.safetensors")};
       },
       ".*/c\\.rank0-of-3\\.safetensors: tensor 'h\\.0' is neither a param "
       "nor an opt_state of the step"},
      {"--resume and --resume-full",
       [](const TempDir &d) {
         return std::vector<std::string>{shardArtifact(3), "--resume",
                                         d.file("a"), "--resume-full",
                                         d.file("b")};
       },
       "--init-from, --resume and --resume-full exclude each other"},
  };
  for (const ErrorCase &c : cases) {
    if (std::string(c.name) == "--resume and --resume-full") {
      // A usage error: the message, then the usage line.
      TempDir dir;
      RunResult r = runTool(c.setup(dir), dir);
      EXPECT_EQ(r.exitCode, 2);
      std::vector<std::string> err = lines(r.err);
      ASSERT_EQ(err.size(), 2u) << r.err;
      EXPECT_EQ(err[0], "zshard-run: error: " + c.message);
      continue;
    }
    expectError(c);
  }
}

#ifdef ZSHARD_MPIEXEC

namespace {

/// Runs zshard-run under mpiexec with \p ranks processes.
RunResult runMpi(int ranks, const std::vector<std::string> &args,
                 const TempDir &scratch) {
  std::string command = shellQuote(ZSHARD_MPIEXEC);
  std::string flags = ZSHARD_MPIEXEC_FLAGS;
  for (size_t start = 0; start < flags.size();) {
    size_t comma = flags.find(',', start);
    std::string flag = flags.substr(start, comma - start);
    if (!flag.empty())
      command += " " + shellQuote(flag);
    start = comma == std::string::npos ? flags.size() : comma + 1;
  }
  command += " -n " + std::to_string(ranks) + " " + shellQuote(ZSHARD_RUN);
  for (const std::string &arg : args)
    command += " " + shellQuote(arg);
  return runShell(command, scratch);
}

} // namespace

// Tests the MPI backend against the local one: mpiexec -n 2 of the 2-rank
// step gives the same losses, rank files and consolidated file bit for bit
// (the collectives reduce in rank order on both), resumes from the local
// run's rank files, and reports a rank-count mismatch once.
TEST(ShardedRunnerMpiTest, AgreesWithTheLocalBackend) {
  TempDir dir;
  std::vector<std::string> common = {shardArtifact(2), "--steps", "4",
                                     "--lr",           "0.05",    "--quiet"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  RunResult local = runTool(
      with({"--log-json", dir.file("local.jsonl"), "--save", dir.file("local"),
            "--save-full", dir.file("local.safetensors")}),
      dir);
  ASSERT_RAN(local);
  RunResult mpi = runMpi(
      2,
      with({"--backend", "mpi", "--log-json", dir.file("mpi.jsonl"), "--save",
            dir.file("mpi"), "--save-full", dir.file("mpi.safetensors")}),
      dir);
  ASSERT_RAN(mpi);
  EXPECT_EQ(lines(mpi.out).size(), 1u) << "rank 0 prints the summary alone";
  Json summary = summaryOf(mpi);
  EXPECT_EQ(summary["backend"], "mpi");
  EXPECT_EQ(summary["ranks"], 2);
  EXPECT_EQ(loggedLosses(dir.file("local.jsonl")),
            loggedLosses(dir.file("mpi.jsonl")));
  for (int r = 0; r < 2; ++r) {
    std::string suffix = ".rank" + std::to_string(r) + "-of-2.safetensors";
    EXPECT_EQ(readFileBytes(dir.file("local" + suffix)),
              readFileBytes(dir.file("mpi" + suffix)));
  }
  EXPECT_EQ(readFileBytes(dir.file("local.safetensors")),
            readFileBytes(dir.file("mpi.safetensors")));

  // MPI resumes what the local backend saved.
  RunResult resumed =
      runMpi(2,
             with({"--backend", "mpi", "--resume", dir.file("local"),
                   "--log-json", dir.file("resumed.jsonl")}),
             dir);
  ASSERT_RAN(resumed);
  EXPECT_EQ(summaryOf(resumed)["first_step"], 5);
  EXPECT_EQ(loggedLosses(dir.file("resumed.jsonl")).size(), 4u);

  // A world of 3 processes for a 2-rank artifact: one error line.
  RunResult wrong = runMpi(3, with({"--backend", "mpi"}), dir);
  EXPECT_NE(wrong.exitCode, 0);
  EXPECT_EQ(wrong.out, "");
  size_t errors = 0;
  for (const std::string &line : lines(wrong.err))
    if (line.rfind("zshard-run: error: ", 0) == 0) {
      ++errors;
      EXPECT_NE(line.find("the artifact is compiled for 2 ranks (grid "
                          "'world' [2]), and the MPI world has 3 processes"),
                std::string::npos)
          << line;
    }
  EXPECT_EQ(errors, 1u) << wrong.err;
}

// Tests that mpiexec without --backend does not run independent copies: the
// run uses the MPI backend (the same losses as --backend mpi), and says so
// once on stderr.
TEST(ShardedRunnerMpiTest, MpiLaunchWithoutBackendUsesMpi) {
  TempDir dir;
  RunResult explicitMpi = runMpi(2,
                                 {shardArtifact(2), "--steps", "3", "--backend",
                                  "mpi", "--log-json", dir.file("mpi.jsonl")},
                                 dir);
  ASSERT_RAN(explicitMpi);
  RunResult detected = runMpi(
      2,
      {shardArtifact(2), "--steps", "3", "--log-json", dir.file("auto.jsonl")},
      dir);
  ASSERT_RAN(detected);
  EXPECT_EQ(summaryOf(detected)["backend"], "mpi");
  EXPECT_EQ(summaryOf(detected)["ranks"], 2);
  EXPECT_EQ(loggedLosses(dir.file("mpi.jsonl")),
            loggedLosses(dir.file("auto.jsonl")));
  size_t notes = 0;
  for (const std::string &line : lines(detected.err))
    notes += line == "zshard-run: started by an MPI launcher (2 processes): "
                     "one rank per process, --backend mpi";
  EXPECT_EQ(notes, 1u) << detected.err;
}

// Tests --trace under MPI: rank 0 gathers every process's spans into one
// file, a compute and a communication lane per rank, named collectives.
TEST(ShardedRunnerMpiTest, RankZeroWritesOneTraceOfEveryRank) {
  TempDir dir;
  RunResult mpi = runMpi(2,
                         {shardArtifact(2), "--steps", "2", "--quiet",
                          "--backend", "mpi", "--trace", dir.file("trace.json"),
                          "--memory-timeline", dir.file("memory.json")},
                         dir);
  ASSERT_RAN(mpi);
  Json trace = Json::parse(readText(dir.file("trace.json")));
  EXPECT_EQ(trace["otherData"]["backend"], "mpi");
  std::map<std::pair<int, std::string>, int> spans; // (pid, name): count
  for (const Json &e : trace["traceEvents"])
    if (e["ph"] == "X")
      spans[{e["pid"].get<int>(), e["name"].get<std::string>()}] += 1;
  for (int pid = 0; pid < 2; ++pid) {
    EXPECT_EQ((spans[{pid, "step 2"}]), 1);
    EXPECT_EQ((spans[{pid, "wait h.0 all_gather"}]), 2);
    EXPECT_EQ((spans[{pid, "all_gather h.0"}]), 2);
    EXPECT_EQ((spans[{pid, "reduce_scatter h.0"}]), 2);
    EXPECT_EQ((spans[{pid, "all_reduce ln"}]), 2);
  }
  EXPECT_EQ(Json::parse(readText(dir.file("memory.json")))["step"], 2);
}

#endif // ZSHARD_MPIEXEC
