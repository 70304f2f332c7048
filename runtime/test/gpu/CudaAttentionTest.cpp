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
// that is not a multiple of the kernels' tile; and the strided entries on
// the device, reading q, k and v as column blocks of one [batch, seq, ...]
// projection and writing out, dq, dk and dv as [batch, seq, heads, head],
// against the same contiguous host results.
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

/// Element (b, h, t, e) of a [batch, heads, seq, d] array, contiguous.
size_t dense(const AttentionCase &c, int64_t heads, int64_t b, int64_t h,
             int64_t t, int64_t e) {
  return size_t(((b * heads + h) * c.seq + t) * c.headDim + e);
}

/// Copies a contiguous [batch, heads, seq, d] array into `rows` (batch x
/// seq rows of `width`) at column `first` (head h at first + h * d), or back
/// when `back`.
void relayout(const AttentionCase &c, int64_t heads, std::vector<float> &x,
              std::vector<float> &rows, int64_t width, int64_t first,
              bool back) {
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t t = 0; t < c.seq; ++t)
        for (int64_t e = 0; e < c.headDim; ++e) {
          float &in = x[dense(c, heads, b, h, t, e)];
          float &out =
              rows[size_t((b * c.seq + t) * width + first + h * c.headDim + e)];
          if (back)
            in = out;
          else
            out = in;
        }
}

void compareStridedWithCpu(GpuFixture &f, const AttentionCase &c,
                           unsigned seed) {
  SCOPED_TRACE("strided batch=" + std::to_string(c.batch) +
               " heads=" + std::to_string(c.heads) + " kvHeads=" +
               std::to_string(c.kvHeads) + " seq=" + std::to_string(c.seq) +
               " headDim=" + std::to_string(c.headDim));
  std::mt19937 rng(seed);
  int64_t d = c.headDim, qw = c.heads * d, kvw = c.kvHeads * d;
  size_t rows = size_t(c.batch * c.heads * c.seq * d),
         kvRows = size_t(c.batch * c.kvHeads * c.seq * d);
  float scale = 1.0f / std::sqrt(float(d));
  std::vector<float> q = randomValues(rows, rng), k = randomValues(kvRows, rng),
                     v = randomValues(kvRows, rng),
                     dout = randomValues(rows, rng);
  std::vector<float> out(rows), lse(rows / size_t(d)), dq(rows), dk(kvRows),
      dv(kvRows);
  zshard_rt_step_attention_fwd(c.batch, c.heads, c.kvHeads, c.seq, d, scale,
                               q.data(), k.data(), v.data(), out.data(),
                               lse.data());
  zshard_rt_step_attention_bwd(c.batch, c.heads, c.kvHeads, c.seq, d, scale,
                               q.data(), k.data(), v.data(), out.data(),
                               lse.data(), dout.data(), dq.data(), dk.data(),
                               dv.data());

  // q, k, v: one projection, a padding column at the end of each row.
  int64_t width = qw + 2 * kvw + 1, bt = c.batch * c.seq;
  std::vector<float> qkv(size_t(bt * width), 0.0f), doutRows(size_t(bt * qw));
  relayout(c, c.heads, q, qkv, width, 0, false);
  relayout(c, c.kvHeads, k, qkv, width, qw, false);
  relayout(c, c.kvHeads, v, qkv, width, qw + kvw, false);
  relayout(c, c.heads, dout, doutRows, qw, 0, false);
  float *gqkv = f.upload(qkv), *gdout = f.upload(doutRows);
  float *gout = f.upload(std::vector<float>(size_t(bt * qw))),
        *glse = f.upload(std::vector<float>(lse.size())),
        *gdq = f.upload(std::vector<float>(size_t(bt * qw))),
        *gdk = f.upload(std::vector<float>(size_t(bt * kvw))),
        *gdv = f.upload(std::vector<float>(size_t(bt * kvw)));
  int64_t sb = c.seq * width, ob = c.seq * qw, kb = c.seq * kvw;
  zshard_rt_set_current_device(f.device);
  zshard_rt_step_attention_strided_fwd(c.batch, c.heads, c.kvHeads, c.seq, d,
                                       scale, gqkv, sb, d, width, gqkv + qw, sb,
                                       d, width, gqkv + qw + kvw, sb, d, width,
                                       gout, ob, d, qw, glse);
  zshard_rt_step_attention_strided_bwd(
      c.batch, c.heads, c.kvHeads, c.seq, d, scale, gqkv, sb, d, width,
      gqkv + qw, sb, d, width, gqkv + qw + kvw, sb, d, width, gout, ob, d, qw,
      glse, gdout, ob, d, qw, gdq, ob, d, qw, gdk, kb, d, kvw, gdv, kb, d, kvw);
  zshard_rt_set_current_device(nullptr);
  auto gathered = [&](float *device, int64_t heads, int64_t rowWidth) {
    std::vector<float> rowsBack = f.download(device, size_t(bt * rowWidth));
    std::vector<float> x(size_t(c.batch * heads * c.seq * d));
    relayout(c, heads, x, rowsBack, rowWidth, 0, true);
    return x;
  };
  expectClose(gathered(gout, c.heads, qw), out, "out");
  expectClose(f.download(glse, lse.size()), lse, "lse");
  expectClose(gathered(gdq, c.heads, qw), dq, "dq");
  expectClose(gathered(gdk, c.kvHeads, kvw), dk, "dk");
  expectClose(gathered(gdv, c.kvHeads, kvw), dv, "dv");
  for (float *ptr : {gqkv, gdout, gout, glse, gdq, gdk, gdv})
    f.release(ptr);
}

TEST_F(CudaAttention, StridedKernelsMatchTheCpu) {
  const AttentionCase cases[] = {{2, 4, 2, 70, 16}, {2, 4, 2, 70, 64}};
  unsigned seed = 100;
  for (const AttentionCase &c : cases)
    compareStridedWithCpu(*this, c, seed++);
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
