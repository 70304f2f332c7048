//===- TokenFileTest.cpp - Tests of the token file loader -----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "data/TokenFile.h"

#include "TestFiles.h"
#include "TestManifest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

/// Tokens and targets of one fill, row-major [B, T].
struct Batch {
  std::vector<int32_t> tokens, targets;
  bool operator==(const Batch &other) const {
    return tokens == other.tokens && targets == other.targets;
  }
};

Batch fill(BatchSource &source, const Manifest &manifest, int64_t step) {
  const GptBatch gpt = *matchGptBatch(manifest);
  Batch out;
  out.tokens.resize(size_t(gpt.batch * gpt.length), -1);
  out.targets.resize(out.tokens.size(), -1);
  source.fill(step, {out.tokens.data(), out.targets.data()});
  return out;
}

std::unique_ptr<BatchSource> open(const Manifest &manifest,
                                  const std::string &path, DType dtype,
                                  DataShard shard = {}, uint64_t seed = 0) {
  DataOptions options;
  options.tokenFile = path;
  options.tokenDType = dtype;
  options.seed = seed;
  options.shard = shard;
  return makeBatchSource(manifest, options);
}

} // namespace

// Tests that every row is a window of the file (targets = tokens shifted by
// one), drawn for (seed, step, row) alone: the same for every instance, and
// different across steps and seeds.
TEST(TokenFileTest, WindowsOfTheFile) {
  TempDir dir;
  std::vector<uint16_t> stream(1000);
  for (size_t i = 0; i < stream.size(); ++i)
    stream[i] = uint16_t((i * 7 + i / 16) % 64);
  writeVector(dir.file("train.bin"), stream);
  Manifest manifest = gptManifest(64, 4, 8);
  auto source = open(manifest, dir.file("train.bin"), DType::U16);
  ASSERT_NE(source->describe().find("1000 u16 tokens"), std::string::npos);

  std::set<std::vector<int32_t>> distinct;
  for (int64_t step = 1; step <= 20; ++step) {
    Batch batch = fill(*source, manifest, step);
    for (int b = 0; b < 4; ++b) {
      // Find the window's offset: the stream has no repeated 9-grams here.
      int64_t offset = -1;
      for (size_t o = 0; o + 8 < stream.size() && offset < 0; ++o) {
        bool match = true;
        for (int t = 0; t < 8; ++t)
          match &= stream[o + t] == batch.tokens[size_t(b * 8 + t)] &&
                   stream[o + t + 1] == batch.targets[size_t(b * 8 + t)];
        if (match)
          offset = int64_t(o);
      }
      ASSERT_GE(offset, 0) << "step " << step << " row " << b;
    }
    distinct.insert(batch.tokens);
    EXPECT_EQ(batch, fill(*open(manifest, dir.file("train.bin"), DType::U16),
                          manifest, step));
  }
  EXPECT_EQ(distinct.size(), 20u);
  EXPECT_FALSE(fill(*source, manifest, 1) ==
               fill(*open(manifest, dir.file("train.bin"), DType::U16, {}, 1),
                    manifest, 1));
}

// Tests that rank r of w draws rows [r B, (r + 1) B) of the global batch.
TEST(TokenFileTest, RanksTakeTheirRowsOfTheGlobalBatch) {
  TempDir dir;
  std::vector<uint32_t> stream(500);
  for (size_t i = 0; i < stream.size(); ++i)
    stream[i] = uint32_t(i);
  writeVector(dir.file("t.bin"), stream);
  Manifest global =
      makeManifest({}, {{"tokens", "i32", {6, 5}}, {"targets", "i32", {6, 5}}});
  Manifest local =
      makeManifest({}, {{"tokens", "i32", {2, 5}}, {"targets", "i32", {2, 5}}});
  Batch all = fill(*open(global, dir.file("t.bin"), DType::U32), global, 3);
  for (int rank = 0; rank < 3; ++rank) {
    Batch mine =
        fill(*open(local, dir.file("t.bin"), DType::U32, {rank, 3}), local, 3);
    EXPECT_TRUE(std::equal(mine.tokens.begin(), mine.tokens.end(),
                           all.tokens.begin() + rank * 10));
  }
  // u32 ids need no vocabulary: no wte here.
  EXPECT_EQ(all.targets[0], all.tokens[0] + 1);
}

// Tests that each epoch visits every window of the file exactly once, split
// between the ranks, and that the next epoch reshuffles the order by itself.
TEST(TokenFileTest, EveryWindowOncePerEpochReshuffled) {
  TempDir dir;
  std::vector<uint32_t> stream(41); // 10 windows of 4 + 1 tokens, stride 4
  for (size_t i = 0; i < stream.size(); ++i)
    stream[i] = uint32_t(i);
  writeVector(dir.file("t.bin"), stream);
  Manifest local =
      makeManifest({}, {{"tokens", "i32", {1, 4}}, {"targets", "i32", {1, 4}}});
  std::vector<std::vector<int32_t>> epochs(2);
  for (int64_t step = 1; step <= 10; ++step)
    for (int rank = 0; rank < 2; ++rank) {
      Batch mine = fill(*open(local, dir.file("t.bin"), DType::U32, {rank, 2}),
                        local, step);
      ASSERT_EQ(mine.tokens[0] % 4, 0) << "windows start every 4 tokens";
      epochs[(step - 1) / 5].push_back(mine.tokens[0] / 4);
    }
  for (std::vector<int32_t> order : epochs) {
    std::vector<int32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  }
  EXPECT_NE(epochs[0], epochs[1]) << "the second epoch has its own order";
}

// Tests the smallest file: exactly T + 1 tokens, one possible window.
TEST(TokenFileTest, ExactlyOneWindow) {
  TempDir dir;
  std::vector<uint16_t> stream = {1, 2, 3, 4, 5};
  writeVector(dir.file("t.bin"), stream);
  Manifest manifest = gptManifest(8, 2, 4);
  Batch batch =
      fill(*open(manifest, dir.file("t.bin"), DType::U16), manifest, 9);
  EXPECT_EQ(batch.tokens, (std::vector<int32_t>{1, 2, 3, 4, 1, 2, 3, 4}));
  EXPECT_EQ(batch.targets, (std::vector<int32_t>{2, 3, 4, 5, 2, 3, 4, 5}));
}

// Tests the file errors: each names the file and the problem.
TEST(TokenFileTest, Errors) {
  TempDir dir;
  Manifest manifest = gptManifest(16, 2, 8);
  std::string path = dir.file("t.bin");
  auto error = [&](DType dtype) {
    return failureOf([&] { open(manifest, path, dtype); });
  };
  EXPECT_EQ(error(DType::U16),
            path + ": cannot open: No such file or directory");
  writeBytes(path, "abc", 3);
  EXPECT_EQ(error(DType::U16), path + ": size 3 bytes is not a multiple of 2 "
                                      "(u16 tokens; see --data-dtype)");
  writeVector(path, std::vector<uint16_t>(5, 1));
  EXPECT_EQ(error(DType::U32), path + ": size 10 bytes is not a multiple of 4 "
                                      "(u32 tokens; see --data-dtype)");
  writeVector(path, std::vector<uint16_t>(6, 1));
  EXPECT_EQ(error(DType::U16),
            path + ": 6 tokens, fewer than the 9 (T + 1) one batch row needs");
  std::vector<uint16_t> stream(40, 3);
  stream[17] = 16;
  stream[30] = 16;
  writeVector(path, stream);
  EXPECT_EQ(error(DType::U16),
            path + ": token 16 at index 17 is not below the vocabulary size "
                   "16 (the rows of param 'wte'); read as u16: is it a file "
                   "of u32 tokens? (--data-dtype u32)");
  std::vector<uint32_t> wide(20);
  for (size_t i = 0; i < wide.size(); ++i)
    wide[i] = uint32_t(1 + i % 15);
  writeVector(path, wide);
  EXPECT_EQ(error(DType::U16),
            path + ": every second u16 token is 0 (40 tokens): it looks like "
                   "a file of u32 tokens; give --data-dtype u32");
  writeVector(path, std::vector<uint32_t>(40, 0x80000000u));
  Manifest noVocab =
      makeManifest({}, {{"tokens", "i32", {2, 8}}, {"targets", "i32", {2, 8}}});
  EXPECT_EQ(failureOf([&] { open(noVocab, path, DType::U32); }),
            path + ": token 2147483648 at index 0 does not fit batch 'tokens' "
                   "(i32)");
  EXPECT_EQ(failureOf([&] {
              open(makeManifest({}, {{"x", "f32", {2, 3}}}), path, DType::U32);
            }),
            path + ": a token file feeds a step whose two batch arguments "
                   "are a token window and the window shifted by one, integer "
                   "[B, T], named tokens/targets, idx/targets, "
                   "input_ids/targets, inputs/targets, x/y or given by "
                   "--data-inputs INPUTS,TARGETS; this step has: x f32 [2, 3]");
  EXPECT_EQ(failureOf([&] { open(manifest, dir.path, DType::U16); }),
            dir.path + ": cannot read: is a directory");
}

// Tests how a causal LM step's batch and vocabulary are found: the pairs of
// names gptBatchNames lists, the embedding tables by their module path, and
// --data-inputs for any other names.
TEST(TokenFileTest, CausalLmBatchByName) {
  auto batch = [](const char *inputs, const char *targets) {
    return std::vector<TestTensor>{{inputs, "i64", {2, 8}},
                                   {targets, "i64", {2, 8}}};
  };
  Manifest nano = makeManifest({{"transformer.wte.weight", "f32", {50, 4}}},
                               batch("idx", "targets"));
  std::optional<GptBatch> gpt = matchGptBatch(nano);
  ASSERT_TRUE(gpt);
  EXPECT_EQ(gpt->tokens->name, "idx");
  EXPECT_EQ(gpt->targets->name, "targets");
  EXPECT_EQ(gpt->length, 8);
  std::optional<Vocabulary> vocab = manifestVocabulary(nano);
  ASSERT_TRUE(vocab);
  EXPECT_EQ(vocab->size, 50);
  EXPECT_EQ(vocab->table, "transformer.wte.weight");

  Manifest llama = makeManifest({{"model.embed_tokens.weight", "f32", {70, 4}}},
                                batch("input_ids", "targets"));
  EXPECT_TRUE(matchGptBatch(llama));
  EXPECT_EQ(manifestVocab(llama), 70);
  // Not a table: a name that only ends in the same letters.
  EXPECT_FALSE(manifestVocab(
      makeManifest({{"xwte.weight", "f32", {50, 4}}}, batch("x", "y"))));

  // Hugging Face's labels may be the window itself (the model shifts them):
  // never guessed; --data-inputs names the pair.
  Manifest hf = makeManifest({}, batch("input_ids", "labels"));
  EXPECT_FALSE(matchGptBatch(hf));
  GptBatch named = tokenFileBatch(hf, "t.bin", "input_ids", "labels");
  EXPECT_EQ(named.tokens->name, "input_ids");
  EXPECT_EQ(named.targets->name, "labels");
  EXPECT_EQ(failureOf([&] { tokenFileBatch(hf, "t.bin", "labels", "y"); }),
            "--data-inputs: 'y' is not a batch argument of the step; its "
            "batch arguments: input_ids i64 [2, 8], labels i64 [2, 8]");
}
