//===- GpuRunnerTest.cpp - zshard-run --device cuda -----------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// requires-gpu. zshard-run on a GPU with quad-gpu.zsa (test/steps/
// quad_gpu.c: quad's model through the hooks, cuBLAS and mgpu*), against
// quad.zsa on the CPU: the same losses, state and memory peaks; save and
// resume through host memory equal one run; the nccl backend on one GPU.
//
//===----------------------------------------------------------------------===//

#include "RunnerSupport.h"

#include "io/Safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

std::vector<float> floatsOf(const std::string &path, const std::string &name) {
  SafetensorsFile file = SafetensorsFile::read(path);
  const TensorView *t = file.find(name);
  if (!t || t->dtype != DType::F32)
    return {};
  std::vector<float> out(t->elements);
  std::memcpy(out.data(), t->data, t->bytes);
  return out;
}

void expectClose(const std::vector<float> &got,
                 const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-6 * (1 + std::fabs(want[i]))) << i;
}

TEST(GpuRunnerTest, QuadOnTheGpuFollowsTheCpu) {
  TempDir dir;
  RunResult cpu =
      runTool({artifact("quad"), "--steps", "5", "--lr", "0.1", "--log-json",
               dir.file("cpu.jsonl"), "--save", dir.file("cpu.safetensors")},
              dir);
  ASSERT_RAN(cpu);
  RunResult gpu =
      runTool({artifact("quad-gpu"), "--device", "cuda", "--steps", "5", "--lr",
               "0.1", "--log-json", dir.file("gpu.jsonl"), "--save",
               dir.file("gpu.safetensors")},
              dir);
  ASSERT_RAN(gpu);
  std::vector<double> want = loggedLosses(dir.file("cpu.jsonl"));
  std::vector<double> got = loggedLosses(dir.file("gpu.jsonl"));
  ASSERT_EQ(got.size(), 5u);
  for (size_t s = 0; s < got.size(); ++s)
    EXPECT_NEAR(got[s], want[s], 1e-6 * want[s]) << "step " << s + 1;
  expectClose(floatsOf(dir.file("gpu.safetensors"), "w"),
              floatsOf(dir.file("cpu.safetensors"), "w"));
  EXPECT_EQ(floatsOf(dir.file("gpu.safetensors"), "w.exp_avg"),
            std::vector<float>(3, 15.0f));
  // The buffers the run holds are the same bytes on the device; the step's
  // temporaries come from the device's pool, charged alike.
  Json cpuPeaks = summaryOf(cpu)["peak_bytes"],
       gpuPeaks = summaryOf(gpu)["peak_bytes"];
  EXPECT_EQ(gpuPeaks["parameters"], cpuPeaks["parameters"]);
  EXPECT_EQ(gpuPeaks["optimizer_state"], cpuPeaks["optimizer_state"]);
  EXPECT_EQ(gpuPeaks["other"], cpuPeaks["other"]);
  EXPECT_EQ(gpuPeaks["activations"], 24); // the step's six floats
}

TEST(GpuRunnerTest, ResumeOnTheGpuEqualsOneRun) {
  TempDir dir;
  std::vector<std::string> gpu = {artifact("quad-gpu"), "--device", "cuda",
                                  "--lr", "0.05"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = gpu;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  ASSERT_RAN(runTool(
      with({"--steps", "6", "--save", dir.file("whole.safetensors")}), dir));
  ASSERT_RAN(runTool(
      with({"--steps", "3", "--save", dir.file("half.safetensors")}), dir));
  ASSERT_RAN(
      runTool(with({"--steps", "3", "--resume", dir.file("half.safetensors"),
                    "--save", dir.file("resumed.safetensors")}),
              dir));
  EXPECT_EQ(readText(dir.file("resumed.safetensors")),
            readText(dir.file("whole.safetensors")));
}

TEST(GpuRunnerTest, NcclBackendOnOneGpu) {
  TempDir dir;
  RunResult r = runTool({artifact("quad-gpu"), "--device", "cuda", "--backend",
                         "nccl", "--steps", "2", "--quiet"},
                        dir);
  ASSERT_RAN(r);
  Json summary = summaryOf(r);
  EXPECT_EQ(summary["backend"], "nccl");
  EXPECT_NEAR(summary["final_loss"].get<double>(), 3 * std::pow(0.998, 2),
              1e-5);
}

} // namespace
