//===- CudaAttentionTest.cpp - The CUDA attention kernels against the CPU -===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// requires-gpu. zshard_rt_step_attention_fwd / _bwd with the CUDA device
// current (cuda/FlashAttention.cu) against the same entries on the host
// (cpu/FlashAttention.cpp), for every head size the kernels specialise (32,
// 64, 128) and one they do not (16), with grouped kv heads and a sequence
// that is not a multiple of the kernels' tile.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using zshard::test::GpuFixture;

namespace {

using CudaAttention = GpuFixture;

struct AttentionCase {
  int64_t batch, heads, kvHeads, seq, headDim;
};

std::vector<float> randomValues(size_t count, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> values(count);
  for (float &x : values)
    x = dist(rng);
  return values;
}

void expectClose(const std::vector<float> &got,
                 const std::vector<float> &expected, const char *what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], expected[i], 2e-4 * (1 + std::fabs(expected[i])))
        << what << " element " << i;
}

void compareWithCpu(GpuFixture &f, const AttentionCase &c, unsigned seed) {
  SCOPED_TRACE("batch=" + std::to_string(c.batch) +
               " heads=" + std::to_string(c.heads) + " kvHeads=" +
               std::to_string(c.kvHeads) + " seq=" + std::to_string(c.seq) +
               " headDim=" + std::to_string(c.headDim));
  std::mt19937 rng(seed);
  size_t rows = size_t(c.batch * c.heads * c.seq),
         kvRows = size_t(c.batch * c.kvHeads * c.seq);
  size_t d = size_t(c.headDim);
  float scale = 1.0f / std::sqrt(float(c.headDim));
  std::vector<float> q = randomValues(rows * d, rng),
                     k = randomValues(kvRows * d, rng),
                     v = randomValues(kvRows * d, rng),
                     dout = randomValues(rows * d, rng);

  // The host.
  std::vector<float> out(rows * d), lse(rows), dq(rows * d), dk(kvRows * d),
      dv(kvRows * d);
  zshard_rt_step_attention_fwd(c.batch, c.heads, c.kvHeads, c.seq, c.headDim,
                               scale, q.data(), k.data(), v.data(), out.data(),
                               lse.data());
  zshard_rt_step_attention_bwd(c.batch, c.heads, c.kvHeads, c.seq, c.headDim,
                               scale, q.data(), k.data(), v.data(), out.data(),
                               lse.data(), dout.data(), dq.data(), dk.data(),
                               dv.data());

  // The device.
  float *gq = f.upload(q), *gk = f.upload(k), *gv = f.upload(v),
        *gdout = f.upload(dout);
  float *gout = f.upload(std::vector<float>(rows * d)),
        *glse = f.upload(std::vector<float>(rows)),
        *gdq = f.upload(std::vector<float>(rows * d)),
        *gdk = f.upload(std::vector<float>(kvRows * d)),
        *gdv = f.upload(std::vector<float>(kvRows * d));
  zshard_rt_set_current_device(f.device);
  zshard_rt_step_attention_fwd(c.batch, c.heads, c.kvHeads, c.seq, c.headDim,
                               scale, gq, gk, gv, gout, glse);
  zshard_rt_step_attention_bwd(c.batch, c.heads, c.kvHeads, c.seq, c.headDim,
                               scale, gq, gk, gv, gout, glse, gdout, gdq, gdk,
                               gdv);
  zshard_rt_set_current_device(nullptr);
  expectClose(f.download(gout, out.size()), out, "out");
  expectClose(f.download(glse, lse.size()), lse, "lse");
  expectClose(f.download(gdq, dq.size()), dq, "dq");
  expectClose(f.download(gdk, dk.size()), dk, "dk");
  expectClose(f.download(gdv, dv.size()), dv, "dv");
  for (float *ptr : {gq, gk, gv, gdout, gout, glse, gdq, gdk, gdv})
    f.release(ptr);
}

TEST_F(CudaAttention, KernelsMatchTheCpuForEveryHeadSize) {
  const AttentionCase cases[] = {
      {2, 4, 2, 70, 16},  // no specialisation: rows in local memory
      {2, 4, 2, 70, 32},  // specialised, grouped kv heads
      {1, 2, 2, 70, 64},  // specialised, one kv head per head
      {1, 4, 1, 40, 128}, // specialised, one kv head for all
      {1, 1, 1, 1, 64},   // one position
  };
  unsigned seed = 1;
  for (const AttentionCase &c : cases)
    compareWithCpu(*this, c, seed++);
}

} // namespace
