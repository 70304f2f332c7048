//===- InteropTest.cpp - zshard-run and the NumPy reference ---------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The runtime and python/zshard_ref (docs/reference.md) read each other's
// safetensors files, and zshard-run on the hand-written mlp step (models.md's
// one-layer mlp with AdamW) follows the reference step for step, including
// resuming from each other's checkpoints. Needs /usr/bin/python3 with NumPy
// (ZSHARD_PYTHON) and the repository's python/ (ZSHARD_PYTHON_PATH).
//
//===----------------------------------------------------------------------===//

#include "RunnerSupport.h"

#include "io/Safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

/// Runs \p script with the reference importable, in \p dir.
RunResult runPython(const std::string &script, const TempDir &dir) {
  std::ofstream(dir.file("script.py")) << script;
  return runShell("cd " + shellQuote(dir.path) +
                      " && PYTHONPATH=" + shellQuote(ZSHARD_PYTHON_PATH) + " " +
                      shellQuote(ZSHARD_PYTHON) + " script.py",
                  dir);
}

/// Runs the reference's command line.
RunResult runReference(const std::string &args, const TempDir &dir) {
  return runShell("cd " + shellQuote(dir.path) +
                      " && PYTHONPATH=" + shellQuote(ZSHARD_PYTHON_PATH) + " " +
                      shellQuote(ZSHARD_PYTHON) + " -m zshard_ref step " + args,
                  dir);
}

std::vector<double> printedLosses(const std::string &out) {
  std::vector<double> losses;
  for (const std::string &line : lines(out))
    losses.push_back(Json::parse(line)["loss"].get<double>());
  return losses;
}

/// Compares every tensor of two state files.
void expectSameState(const std::string &got, const std::string &want,
                     double tolerance) {
  SafetensorsFile a = SafetensorsFile::read(got),
                  b = SafetensorsFile::read(want);
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (const TensorView &t : b.tensors()) {
    SCOPED_TRACE(t.name);
    const TensorView *u = a.find(t.name);
    ASSERT_NE(u, nullptr);
    ASSERT_EQ(u->shape, t.shape);
    ASSERT_EQ(u->dtype, DType::F32);
    ASSERT_EQ(t.dtype, DType::F32);
    for (uint64_t i = 0; i < t.elements; ++i) {
      double x = loadAsDouble(DType::F32, u->data, i),
             y = loadAsDouble(DType::F32, t.data, i);
      EXPECT_NEAR(x, y, tolerance * (1 + std::fabs(y))) << "element " << i;
    }
  }
}

} // namespace

// Tests that the C++ writer produces exactly the reference's bytes for the
// same tensors, and that each reads the other's file.
TEST(InteropTest, SafetensorsBytesMatchTheReference) {
  TempDir dir;
  std::vector<float> f = {1.5f, -0.0f, 3e38f, 1e-40f, 0.1f, -7.0f};
  std::vector<int32_t> i = {-1, 0, 2147483647, -2147483647 - 1};
  std::vector<uint16_t> bf = {0x3f80, 0xc2f7, 0x7f80};
  std::vector<uint32_t> u = {4000000000u};
  std::vector<int64_t> l = {-5, 1ll << 40};
  writeSafetensors(dir.file("cpp.safetensors"),
                   {{"h.0.attn.c_attn.weight", DType::F32, {2, 3}, f.data()},
                    {"ids", DType::I32, {4}, i.data()},
                    {"bf", DType::BF16, {3}, bf.data()},
                    {"u", DType::U32, {}, u.data()},
                    {"l", DType::I64, {1, 2}, l.data()},
                    {"empty", DType::F32, {0}, nullptr}},
                   {{"step", "12"}, {"model", "gpt"}});
  RunResult r = runPython(R"(
import numpy as np
from zshard_ref import safetensors_io as st
tensors = {
    "h.0.attn.c_attn.weight": np.array([[1.5, -0.0, 3e38], [1e-40, 0.1, -7.0]], np.float32),
    "ids": np.array([-1, 0, 2147483647, -2147483648], np.int32),
    "bf": np.array([0x3f80, 0xc2f7, 0x7f80], np.uint16),
    "u": np.array(4000000000, np.uint32),
    "l": np.array([[-5, 1 << 40]], np.int64),
    "empty": np.zeros((0,), np.float32),
}
st.save_file("py.safetensors", tensors, metadata={"step": "12", "model": "gpt"},
             dtypes={"bf": "BF16"})
f = st.read_file("cpp.safetensors")
assert f.metadata == {"step": "12", "model": "gpt"}, f.metadata
assert list(f.tensors) == list(tensors), list(f.tensors)
assert f.dtypes["bf"] == "BF16"
assert f.tensors["bf"].tolist() == [1.0, -123.5, float("inf")], f.tensors["bf"]
for name, value in tensors.items():
    if name != "bf":
        assert f.tensors[name].dtype == value.dtype, name
        assert np.array_equal(f.tensors[name], value), name
print("ok")
)",
                          dir);
  ASSERT_RAN(r);
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(readFileBytes(dir.file("cpp.safetensors")),
            readFileBytes(dir.file("py.safetensors")));
}

// Tests zshard-run on the hand-written mlp step against the reference: the
// same init file (written by the reference), the same batch file (written
// here), the same losses and state after 3 steps; then each resumes from the
// other's checkpoint for a 4th step.
TEST(InteropTest, MlpFollowsTheReference) {
  TempDir dir;
  const std::string model = "--model mlp --widths 4,3 --loss mse --lr 0.05 ";
  RunResult r = runReference(model + "--init-seed 0 --batch-seed 0 --batch 5 "
                                     "--steps 0 --out init.safetensors",
                             dir);
  ASSERT_RAN(r);
  std::vector<float> x(3 * 5 * 4), target(3 * 5 * 3);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.7f * float(i));
  for (size_t i = 0; i < target.size(); ++i)
    target[i] = std::cos(1.3f * float(i));
  writeSafetensors(dir.file("batch.safetensors"),
                   {{"x", DType::F32, {3, 5, 4}, x.data()},
                    {"target", DType::F32, {3, 5, 3}, target.data()}},
                   {});

  r = runReference(model + "--params init.safetensors --batch-file "
                           "batch.safetensors --steps 3 --out ref3.safetensors",
                   dir);
  ASSERT_RAN(r);
  std::vector<double> want = printedLosses(r.out);
  r = runTool({artifact("mlp"), "--init-from", dir.file("init.safetensors"),
               "--batch-file", dir.file("batch.safetensors"), "--steps", "3",
               "--lr", "0.05", "--save", dir.file("run3.safetensors"),
               "--log-json", dir.file("log.jsonl")},
              dir);
  ASSERT_RAN(r);
  std::vector<double> got = loggedLosses(dir.file("log.jsonl"));
  ASSERT_EQ(got.size(), 3u);
  ASSERT_EQ(want.size(), 3u);
  for (size_t s = 0; s < 3; ++s)
    EXPECT_NEAR(got[s], want[s], 1e-5 * want[s]) << "step " << s + 1;
  expectSameState(dir.file("run3.safetensors"), dir.file("ref3.safetensors"),
                  1e-5);

  // Step 4 both ways: the reference from zshard-run's checkpoint, zshard-run
  // from the reference's. Both use batch entry (4 - 1) mod 3 = 0.
  r = runReference(model + "--params run3.safetensors --batch-file "
                           "batch.safetensors --steps 1 --out ref4.safetensors",
                   dir);
  ASSERT_RAN(r);
  std::vector<double> want4 = printedLosses(r.out);
  r = runTool({artifact("mlp"), "--resume", dir.file("ref3.safetensors"),
               "--batch-file", dir.file("batch.safetensors"), "--steps", "1",
               "--lr", "0.05", "--save", dir.file("run4.safetensors"),
               "--log-json", dir.file("log4.jsonl")},
              dir);
  ASSERT_RAN(r);
  EXPECT_EQ(summaryOf(r)["first_step"], 4);
  std::vector<double> got4 = loggedLosses(dir.file("log4.jsonl"));
  ASSERT_EQ(want4.size(), 1u);
  ASSERT_EQ(got4.size(), 1u);
  EXPECT_NEAR(got4[0], want4[0], 1e-5 * want4[0]);
  expectSameState(dir.file("run4.safetensors"), dir.file("ref4.safetensors"),
                  1e-5);
  EXPECT_EQ(
      *SafetensorsFile::read(dir.file("ref4.safetensors")).findMetadata("step"),
      "4");
}
