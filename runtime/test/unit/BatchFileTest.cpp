//===- BatchFileTest.cpp - Tests of batches from safetensors files --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "data/BatchFile.h"

#include "io/Safetensors.h"

#include "TestFiles.h"
#include "TestManifest.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {
std::unique_ptr<BatchSource> openBatchFile(const Manifest &manifest,
                                           const std::string &path,
                                           DataShard shard = {}) {
  DataOptions options;
  options.batchFile = path;
  options.shard = shard;
  return makeBatchSource(manifest, options);
}

std::vector<int64_t> iota(size_t n, int64_t start = 0) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}
} // namespace

// Tests a file with a leading step axis: global step s uses entry
// (s - 1) mod S, so a resumed run continues where it left off; integer
// tensors of any integer dtype are read as the argument's i32.
TEST(BatchFileTest, StepAxis) {
  TempDir dir;
  Manifest manifest = gptManifest(100, 2, 3);
  std::vector<int64_t> tokens = iota(3 * 6); // [3, 2, 3] as I64
  std::vector<uint16_t> targets(3 * 6);      // [3, 2, 3] as U16
  for (size_t i = 0; i < targets.size(); ++i)
    targets[i] = uint16_t(i + 1);
  std::string path = dir.file("b.safetensors");
  writeSafetensors(path,
                   {{"tokens", DType::I64, {3, 2, 3}, tokens.data()},
                    {"targets", DType::U16, {3, 2, 3}, targets.data()}},
                   {});
  auto source = openBatchFile(manifest, path);
  EXPECT_NE(source->describe().find("3 batches"), std::string::npos);
  std::vector<int32_t> x(6), y(6);
  for (int64_t step : {1, 2, 3, 4, 8}) {
    source->fill(step, {x.data(), y.data()});
    int64_t entry = (step - 1) % 3;
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(x[size_t(i)], entry * 6 + i) << "step " << step;
      EXPECT_EQ(y[size_t(i)], entry * 6 + i + 1);
    }
  }
}

// Tests a file without a step axis (every step the same batch), BF16 floats
// widened to f32, and rank slicing of the global batch.
TEST(BatchFileTest, OneBatchAndRanks) {
  TempDir dir;
  Manifest manifest =
      makeManifest({}, {{"x", "f32", {1, 2}}, {"labels", "i32", {1}}});
  std::vector<uint16_t> x = {0x3f80, 0x4000, 0x4040, 0x4080}; // 1 2 3 4
  std::vector<int32_t> labels = {7, 9};
  std::string path = dir.file("b.safetensors");
  writeSafetensors(path,
                   {{"x", DType::BF16, {2, 2}, x.data()},
                    {"labels", DType::I32, {2}, labels.data()}},
                   {});
  for (int rank = 0; rank < 2; ++rank) {
    auto source = openBatchFile(manifest, path, {rank, 2});
    float xs[2];
    int32_t label;
    for (int64_t step : {1, 5}) {
      source->fill(step, {xs, &label});
      EXPECT_EQ(xs[0], 1.0f + 2 * rank);
      EXPECT_EQ(xs[1], 2.0f + 2 * rank);
      EXPECT_EQ(label, labels[size_t(rank)]);
    }
  }
}

// Tests every error: each names the file and the tensor.
TEST(BatchFileTest, Errors) {
  TempDir dir;
  Manifest manifest = gptManifest(10, 2, 3);
  std::string path = dir.file("b.safetensors");
  auto error = [&](const std::vector<TensorToWrite> &tensors) {
    writeSafetensors(path, tensors, {});
    return failureOf([&] { openBatchFile(manifest, path); });
  };
  std::vector<int32_t> ok(12, 1), bad(6, 1);
  bad[4] = 10;
  std::vector<float> floats(6, 1.0f);
  EXPECT_EQ(error({{"tokens", DType::I32, {2, 3}, ok.data()}}),
            path + ": no tensor for batch argument 'targets' (i32 [2, 3])");
  EXPECT_EQ(error({{"tokens", DType::I32, {2, 3}, ok.data()},
                   {"targets", DType::I32, {2, 3}, ok.data()},
                   {"x", DType::I32, {2}, ok.data()}}),
            path + ": tensor 'x' is not a batch argument of the step (batch "
                   "arguments: tokens, targets)");
  EXPECT_EQ(error({{"tokens", DType::I32, {3, 2}, ok.data()},
                   {"targets", DType::I32, {2, 3}, ok.data()}}),
            path + ": tensor 'tokens' has shape [3, 2]; batch argument "
                   "'tokens' needs [2, 3] or [S, ...] of it");
  EXPECT_EQ(error({{"tokens", DType::I32, {2, 2, 3}, ok.data()},
                   {"targets", DType::I32, {2, 3}, ok.data()}}),
            path + ": tensor 'targets' has shape [2, 3], but the batch tensors "
                   "need the same leading step axis (or none)");
  EXPECT_EQ(error({{"tokens", DType::I32, {0, 2, 3}, ok.data()},
                   {"targets", DType::I32, {0, 2, 3}, ok.data()}}),
            path + ": tensor 'tokens' has an empty step axis");
  EXPECT_EQ(error({{"tokens", DType::F32, {2, 3}, floats.data()},
                   {"targets", DType::I32, {2, 3}, ok.data()}}),
            path + ": tensor 'tokens' is F32, which cannot be read as batch "
                   "argument 'tokens' (i32)");
  EXPECT_EQ(error({{"tokens", DType::I32, {2, 3}, ok.data()},
                   {"targets", DType::I32, {2, 3}, bad.data()}}),
            path + ": tensor 'targets': element 4 = 10 is not in [0, 10) (the "
                   "vocabulary of param 'wte')");
  std::vector<int64_t> huge(6, int64_t(1) << 33);
  EXPECT_EQ(error({{"tokens", DType::I64, {2, 3}, huge.data()},
                   {"targets", DType::I32, {2, 3}, ok.data()}}),
            path + ": tensor 'tokens': element 0 = 8589934592 does not fit "
                   "i32");
  writeBytes(path, "\x10\0\0\0\0\0\0\0{}", 10);
  EXPECT_EQ(failureOf([&] { openBatchFile(manifest, path); }),
            path + ": invalid safetensors file: header length 16 runs past "
                   "the end of the file (2 bytes follow the length)");
}
