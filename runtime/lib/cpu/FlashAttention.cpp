//===- FlashAttention.cpp - tiled causal attention on the host ------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Flash attention's algorithm on the CPU, one (batch, head) at a time, in
/// tiles of kTile query rows (the forward, against blocks of up to kKeyBlock
/// keys) or kTile key rows by kTile query rows (the backward) whose products
/// run on cblas_sgemm, each operand's rows read and written through its
/// strides (StepAttentionShape; the BLAS's leading dimension is the seq
/// stride):
///
/// forward, per query tile: running row max m, sum l and accumulator acc;
///   per key block up to the tile's last query: S = scale Q K^T (masked
///   above the diagonal), m' = max(m, rowmax S), P = exp(S - m'),
///   l = l exp(m - m') + rowsum P, acc = acc exp(m - m') + P V (the first
///   block sets l = rowsum P, acc = P V);
///   out = acc / l, lse = m + log l.
/// backward, per key tile: per query tile at or below the diagonal:
///   P = exp(scale Q K^T - lse) (0 above the diagonal), dV += P^T dO,
///   dS = P * (dO V^T - delta), dQ += scale dS K, dK += scale dS^T Q, with
///   delta = rowsum(dO * out) computed first. The first product into a tile
///   of dQ, dK or dV overwrites it (beta 0): the gradients are not zeroed.
///
/// Each head's K (and in the backward V) is transposed once into a scratch
/// K^T, so that the score products Q K^T and dO V^T run as plain products
/// on it: OpenBLAS 0.3.21 takes twice as long over a 64 x 64 x 64 product
/// with a transposed B as over the plain one, and the transposes (16 x 16
/// blocks in AVX-512 registers where the CPU has them) cost a few percent
/// of that.
///
/// The exponentials of the scores are expApprox (Cephes' expf, within 2 ulp)
/// so that the row loops vectorise: AVX-512 intrinsics where the CPU has
/// them (expApprox16, bit for bit the scalar one), else AVX2 or baseline
/// code (target clones), in the same fixed order either way.
///
//===----------------------------------------------------------------------===//

#include "cpu/ExpApprox.h"
#include "step/StepAttention.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

using namespace zshard::rt;

namespace {

constexpr int64_t kTile = 64;

/// The forward's key block: a query tile's scores against up to this many
/// keys come from one product and go through one softmax pass, so that a
/// sequence of up to kKeyBlock needs none of the online softmax's rescaling
/// (the d256 step's forward attention calls 1.80 -> 1.62 ms in the step).
constexpr int64_t kKeyBlock = 256;

/// The row helpers below keep kLanes partial results, one per column modulo
/// kLanes, combined in a fixed order: the sums vectorise (GCC keeps a float
/// sum in order otherwise), the maxima at least run as kLanes independent
/// chains, and the result is the same whichever clone runs them (the file
/// is built without floating-point contraction).
constexpr int64_t kLanes = 16;
static_assert(kTile % kLanes == 0,
              "a tile's rows hold their visible columns rounded up to kLanes");

/// n rounded up to a whole number of kLanes.
int64_t roundUpToLanes(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

/// The largest of `start` and row[0, n).
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] float
rowMax(const float *row, int64_t n, float start) {
  float lanes[kLanes];
  std::fill_n(lanes, kLanes, start);
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] = std::max(lanes[l], row[c + l]);
  float best = start;
  for (int64_t l = 0; l < kLanes; ++l)
    best = std::max(best, lanes[l]);
  for (; c < n; ++c)
    best = std::max(best, row[c]);
  return best;
}

/// row[c] = e^(row[c] - shift) for c in [0, n) and 0 for c in [n, n rounded
/// up to kLanes), which `row` must hold; returns the sum of row[0, n). The
/// last, partial group of kLanes runs as a whole one (vector code, on
/// whatever the row holds past n) and its lanes past n are then zeroed,
/// which leaves the lanes' sums as they are.
[[gnu::target_clones("arch=x86-64-v3", "default")]] float
expShiftedLanes(float *row, int64_t n, float shift) {
  float lanes[kLanes] = {};
  for (int64_t c = 0; c < n; c += kLanes) {
    float group[kLanes];
    for (int64_t l = 0; l < kLanes; ++l)
      group[l] = expApprox(row[c + l] - shift);
    for (int64_t l = 0; l < kLanes; ++l)
      group[l] = c + l < n ? group[l] : 0.0f;
    for (int64_t l = 0; l < kLanes; ++l) {
      row[c + l] = group[l];
      lanes[l] += group[l];
    }
  }
  float sum = 0;
  for (int64_t l = 0; l < kLanes; ++l)
    sum += lanes[l];
  return sum;
}

/// The backward's row: p[c] = e^(p[c] - lse), dp[c] = p[c] (dp[c] - delta)
/// for c in [0, n), and p[c] = dp[c] = 0 for c in [n, n rounded up to
/// kLanes), which both must hold (the last group as in expShifted).
[[gnu::target_clones("arch=x86-64-v3", "default")]] void
softmaxGradRowLanes(float *p, float *dp, int64_t n, float lse, float delta) {
  for (int64_t c = 0; c < n; c += kLanes) {
    float e[kLanes], g[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) {
      e[l] = expApprox(p[c + l] - lse);
      g[l] = e[l] * (dp[c + l] - delta);
    }
    for (int64_t l = 0; l < kLanes; ++l) {
      bool visible = c + l < n;
      p[c + l] = visible ? e[l] : 0.0f;
      dp[c + l] = visible ? g[l] : 0.0f;
    }
  }
}

// GCC 12's AVX-512 intrinsics pass _mm512_undefined_ps() as the unused
// merge operand, which -Wuninitialized reports in the caller.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

/// The lanes of a group of kLanes starting at column c that lie in [0, n).
[[gnu::target("avx512f")]] __mmask16 visibleLanes(int64_t c, int64_t n) {
  return n - c >= kLanes ? __mmask16(0xFFFF)
                         : static_cast<__mmask16>((1u << (n - c)) - 1);
}

/// expShiftedLanes in AVX-512 registers, bit for bit (expApprox16; the
/// lanes summed in the same order).
[[gnu::target("avx512f")]] float expShifted16(float *row, int64_t n,
                                              float shift) {
  __m512 lanes = _mm512_setzero_ps(), by = _mm512_set1_ps(shift);
  for (int64_t c = 0; c < n; c += kLanes) {
    __m512 e = _mm512_maskz_mov_ps(
        visibleLanes(c, n),
        expApprox16(_mm512_sub_ps(_mm512_loadu_ps(row + c), by)));
    _mm512_storeu_ps(row + c, e);
    lanes = _mm512_add_ps(lanes, e);
  }
  float partial[kLanes];
  _mm512_storeu_ps(partial, lanes);
  float sum = 0;
  for (int64_t l = 0; l < kLanes; ++l)
    sum += partial[l];
  return sum;
}

/// softmaxGradRowLanes in AVX-512 registers, bit for bit.
[[gnu::target("avx512f")]] void softmaxGradRow16(float *p, float *dp, int64_t n,
                                                 float lse, float delta) {
  __m512 shift = _mm512_set1_ps(lse), by = _mm512_set1_ps(delta);
  for (int64_t c = 0; c < n; c += kLanes) {
    __mmask16 visible = visibleLanes(c, n);
    __m512 e = expApprox16(_mm512_sub_ps(_mm512_loadu_ps(p + c), shift));
    __m512 g = _mm512_mul_ps(e, _mm512_sub_ps(_mm512_loadu_ps(dp + c), by));
    _mm512_storeu_ps(p + c, _mm512_maskz_mov_ps(visible, e));
    _mm512_storeu_ps(dp + c, _mm512_maskz_mov_ps(visible, g));
  }
}

#pragma GCC diagnostic pop

/// Whether the CPU runs the AVX-512 row functions (decided once).
bool hasAvx512() {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
}

float expShifted(float *row, int64_t n, float shift) {
  return hasAvx512() ? expShifted16(row, n, shift)
                     : expShiftedLanes(row, n, shift);
}

void softmaxGradRow(float *p, float *dp, int64_t n, float lse, float delta) {
  if (hasAvx512())
    softmaxGradRow16(p, dp, n, lse, delta);
  else
    softmaxGradRowLanes(p, dp, n, lse, delta);
}

/// The sum of a[e] * b[e] for e in [0, n): element e into partial sum
/// e mod kLanes, in order, the partial sums added in lane order, then the
/// elements past the last whole group.
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] float
rowDot(const float *a, const float *b, int64_t n) {
  float lanes[kLanes] = {};
  int64_t e = 0;
  for (; e + kLanes <= n; e += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] += a[e + l] * b[e + l];
  float sum = 0;
  for (int64_t l = 0; l < kLanes; ++l)
    sum += lanes[l];
  for (; e < n; ++e)
    sum += a[e] * b[e];
  return sum;
}

// GCC 12's AVX-512 intrinsics pass _mm512_undefined_ps() as the unused
// merge operand, which -Wuninitialized reports in the caller.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

/// dst[c][r] = src[r][c] for one 16 x 16 block (leading dimensions lds,
/// ldd), in AVX-512 registers.
[[gnu::target("avx512f")]] void transposeBlock16(const float *src, int64_t lds,
                                                 float *dst, int64_t ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm512_loadu_ps(src + i * lds);
  // Pairs of rows interleaved, then pairs of pairs, then 128-bit lanes.
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    __m512d c = _mm512_castps_pd(t[4 * i + 2]),
            d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // r[4 i + j] holds, in 128-bit lane L, column 4 L + j of rows 4 i .. 4 i + 3.
  for (int j = 0; j < 4; ++j) {
    __m512 lo0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x44);
    __m512 lo1 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x44);
    __m512 hi0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xEE);
    __m512 hi1 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xEE);
    _mm512_storeu_ps(dst + j * ldd, _mm512_shuffle_f32x4(lo0, lo1, 0x88));
    _mm512_storeu_ps(dst + (4 + j) * ldd, _mm512_shuffle_f32x4(lo0, lo1, 0xDD));
    _mm512_storeu_ps(dst + (8 + j) * ldd, _mm512_shuffle_f32x4(hi0, hi1, 0x88));
    _mm512_storeu_ps(dst + (12 + j) * ldd,
                     _mm512_shuffle_f32x4(hi0, hi1, 0xDD));
  }
}

#pragma GCC diagnostic pop

/// dst (cols x rows, leading dimension rows) = src^T, src: rows x cols with
/// leading dimension lds. Exact: it only moves values.
void transpose(const float *src, int64_t lds, int64_t rows, int64_t cols,
               float *dst) {
  bool avx512 = hasAvx512();
  int64_t r0 = 0;
  if (avx512)
    for (; r0 + 16 <= rows; r0 += 16)
      for (int64_t c0 = 0; c0 + 16 <= cols; c0 += 16)
        transposeBlock16(src + r0 * lds + c0, lds, dst + c0 * rows + r0, rows);
  int64_t fullCols = avx512 ? cols / 16 * 16 : 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = r < r0 ? fullCols : 0; c < cols; ++c)
      dst[c * rows + r] = src[r * lds + c];
}

/// The leading dimension the BLAS takes for rows of `d` values `stride`
/// apart: a single row's stride is never used, and the BLAS wants at least
/// d (the entries check that several rows do not overlap).
int64_t rowsLd(int64_t stride, int64_t d) { return std::max(stride, d); }

/// C (rows x cols, ldc) = alpha A B, A: rows x depth, B: depth x cols, both
/// with leading dimension lda / ldb.
void gemmNNInto(int64_t rows, int64_t cols, int64_t depth, float alpha,
                const float *a, int64_t lda, const float *b, int64_t ldb,
                float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(rows), int(cols),
              int(depth), alpha, a, int(lda), b, int(ldb), 0.0f, c, int(ldc));
}

/// C (rows x cols) = alpha A B + beta C, A: rows x depth, B: depth x cols
/// (beta 0: C is not read).
void gemmNN(int64_t rows, int64_t cols, int64_t depth, float alpha,
            const float *a, int64_t lda, const float *b, int64_t ldb,
            float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(rows), int(cols),
              int(depth), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

/// C (rows x cols) = alpha A^T B + beta C, A: depth x rows, B: depth x cols.
void gemmTN(int64_t rows, int64_t cols, int64_t depth, float alpha,
            const float *a, int64_t lda, const float *b, int64_t ldb,
            float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(rows), int(cols),
              int(depth), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

/// Brings the rows of the next head's operands towards the core (into L2)
/// a few cache lines at a time while the current head computes. A head's
/// rows lie a seq stride apart (3 x the model width in a fused qkv buffer:
/// 3 KiB at d256), too far apart for the hardware's stride prefetchers, so
/// without it each row's first touch waits on memory: the d256 step's
/// attention ran 20% slower with its operands out of cache than in it.
/// Prefetches change no value.
class RowPrefetcher {
public:
  /// Forgets what is queued.
  void clear() {
    numQueued = current = 0;
    row = linesLeft = 0;
    line = rowEnd = nullptr;
  }

  /// Queues `rows` rows of `rowFloats` floats, `stride` floats apart, up to
  /// kBudget bytes in all (past that the lines would push the current
  /// head's own out of L2).
  void add(const float *base, int64_t stride, int64_t rows, int64_t rowFloats) {
    int64_t lineCount = rowFloats * int64_t(sizeof(float)) / kLine + 1;
    rows = std::min(rows, (kBudget / kLine - linesLeft) / lineCount);
    if (rows <= 0 || numQueued == int64_t(queue.size()))
      return;
    queue[numQueued++] = {reinterpret_cast<const char *>(base),
                          stride * int64_t(sizeof(float)), rows,
                          rowFloats * int64_t(sizeof(float))};
    linesLeft += rows * lineCount;
  }

  /// Spreads what is queued over about `steps` calls of step().
  void spread(int64_t steps) {
    perStep = (linesLeft + steps - 1) / std::max<int64_t>(steps, 1);
  }

  /// Issues the next share of the queued lines.
  void step() {
    for (int64_t n = 0; n < perStep; ++n) {
      if (line >= rowEnd && !nextRow())
        return;
      __builtin_prefetch(line, /*rw=*/0, /*locality=*/2);
      line += kLine;
    }
  }

private:
  static constexpr int64_t kLine = 64;
  static constexpr int64_t kBudget = int64_t(512) << 10;

  bool nextRow() {
    for (; current < numQueued; ++current, row = 0) {
      const Rows &r = queue[current];
      if (row == r.rows)
        continue;
      const char *start = r.base + row++ * r.strideBytes;
      line = start - reinterpret_cast<uintptr_t>(start) % kLine;
      rowEnd = start + r.rowBytes;
      return true;
    }
    return false;
  }

  struct Rows {
    const char *base;
    int64_t strideBytes, rows, rowBytes;
  };
  std::array<Rows, 8> queue;
  int64_t numQueued = 0, current = 0, row = 0, linesLeft = 0, perStep = 0;
  const char *line = nullptr, *rowEnd = nullptr;
};

/// The head after (b, h), or false after the last.
bool nextHead(const StepAttentionShape &s, int64_t &b, int64_t &h) {
  if (++h == s.heads) {
    h = 0;
    ++b;
  }
  return b < s.batch;
}

} // namespace

void zshard::rt::cpuAttentionForward(const StepAttentionShape &s,
                                     const float *q, const float *k,
                                     const float *v, float *out, float *lse) {
  const int64_t t = s.seq, d = s.headDim;
  const int64_t ldq = rowsLd(s.q.seq, d), ldk = rowsLd(s.k.seq, d),
                ldv = rowsLd(s.v.seq, d), ldo = s.out.seq;
  const float minusInf = -std::numeric_limits<float>::infinity();
  std::vector<float> scores(kTile * kKeyBlock), acc(kTile * d), m(kTile),
      l(kTile);
  std::vector<float> kT(d * t);
  RowPrefetcher prefetcher;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      int64_t kvh = h / s.group();
      const float *qh = q + s.q.row(b, h, 0);
      const float *kh = k + s.k.row(b, kvh, 0);
      // Heads of one kv head are consecutive: K^T once for them all.
      if (h % s.group() == 0)
        transpose(kh, ldk, t, d, kT.data());
      const float *vh = v + s.v.row(b, kvh, 0);
      float *oh = out + s.out.row(b, h, 0);
      float *lh = lse + (b * s.heads + h) * t;
      // The next head's rows, over this head's softmax and output rows.
      prefetcher.clear();
      if (int64_t nb = b, nh = h; nextHead(s, nb, nh)) {
        prefetcher.add(q + s.q.row(nb, nh, 0), ldq, t, d);
        if (nh % s.group() == 0) {
          prefetcher.add(k + s.k.row(nb, nh / s.group(), 0), ldk, t, d);
          prefetcher.add(v + s.v.row(nb, nh / s.group(), 0), ldv, t, d);
        }
        prefetcher.add(out + s.out.row(nb, nh, 0), ldo, t, d);
      }
      prefetcher.spread(2 * t);
      for (int64_t i0 = 0; i0 < t; i0 += kTile) {
        int64_t rows = std::min(kTile, t - i0);
        // The keys this tile's queries see: [0, i0 + rows).
        int64_t keyEnd = i0 + rows;
        std::fill(m.begin(), m.end(), minusInf);
        std::fill(l.begin(), l.end(), 0.0f);
        for (int64_t j0 = 0; j0 < keyEnd; j0 += kKeyBlock) {
          int64_t cols = std::min(kKeyBlock, keyEnd - j0);
          bool first = j0 == 0;
          gemmNNInto(rows, cols, d, s.scale, qh + i0 * ldq, ldq, kT.data() + j0,
                     t, scores.data(), kKeyBlock);
          for (int64_t r = 0; r < rows; ++r) {
            prefetcher.step();
            float *row = scores.data() + r * kKeyBlock;
            // Keys u <= i0 + r are visible (none of a later block for the
            // block's first rows).
            int64_t visible = std::clamp<int64_t>(i0 + r - j0 + 1, 0, cols);
            float newMax = rowMax(row, visible, m[r]);
            float sum = expShifted(row, visible, newMax);
            for (int64_t c = roundUpToLanes(visible); c < cols; ++c)
              row[c] = 0.0f;
            if (first) {
              l[r] = sum;
            } else {
              float correction = std::exp(m[r] - newMax);
              l[r] = l[r] * correction + sum;
              float *a = acc.data() + r * d;
              for (int64_t e = 0; e < d; ++e)
                a[e] *= correction;
            }
            m[r] = newMax;
          }
          gemmNN(rows, d, cols, 1.0f, scores.data(), kKeyBlock, vh + j0 * ldv,
                 ldv, first ? 0.0f : 1.0f, acc.data(), d);
        }
        for (int64_t r = 0; r < rows; ++r) {
          prefetcher.step();
          float inv = 1.0f / l[r];
          for (int64_t e = 0; e < d; ++e)
            oh[(i0 + r) * ldo + e] = acc[r * d + e] * inv;
          lh[i0 + r] = m[r] + std::log(l[r]);
        }
      }
    }
}

void zshard::rt::cpuAttentionBackward(const StepAttentionShape &s,
                                      const float *q, const float *k,
                                      const float *v, const float *out,
                                      const float *lse, const float *dout,
                                      float *dq, float *dk, float *dv) {
  const int64_t t = s.seq, d = s.headDim;
  const int64_t ldq = rowsLd(s.q.seq, d), ldk = rowsLd(s.k.seq, d),
                ldv = rowsLd(s.v.seq, d), ldo = s.out.seq,
                lddo = rowsLd(s.dout.seq, d), lddq = rowsLd(s.dq.seq, d),
                lddk = rowsLd(s.dk.seq, d), lddv = rowsLd(s.dv.seq, d);
  std::vector<float> p(kTile * kTile), dp(kTile * kTile), delta(t);
  std::vector<float> kT(d * t), vT(d * t);
  RowPrefetcher prefetcher;
  // Row steps of a head: delta's rows and the softmax rows of the tiles at
  // or below the diagonal.
  const int64_t tiles = (t + kTile - 1) / kTile;
  const int64_t rowSteps = t + std::min(t, kTile) * tiles * (tiles + 1) / 2;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      int64_t kvh = h / s.group();
      const float *qh = q + s.q.row(b, h, 0), *oh = out + s.out.row(b, h, 0);
      const float *doh = dout + s.dout.row(b, h, 0);
      const float *kh = k + s.k.row(b, kvh, 0), *vh = v + s.v.row(b, kvh, 0);
      const float *lh = lse + (b * s.heads + h) * t;
      float *dqh = dq + s.dq.row(b, h, 0), *dkh = dk + s.dk.row(b, kvh, 0),
            *dvh = dv + s.dv.row(b, kvh, 0);
      if (h % s.group() == 0) {
        transpose(kh, ldk, t, d, kT.data());
        transpose(vh, ldv, t, d, vT.data());
      }
      prefetcher.clear();
      if (int64_t nb = b, nh = h; nextHead(s, nb, nh)) {
        int64_t nkvh = nh / s.group();
        if (nh % s.group() == 0) {
          prefetcher.add(k + s.k.row(nb, nkvh, 0), ldk, t, d);
          prefetcher.add(v + s.v.row(nb, nkvh, 0), ldv, t, d);
        }
        prefetcher.add(dout + s.dout.row(nb, nh, 0), lddo, t, d);
        prefetcher.add(out + s.out.row(nb, nh, 0), ldo, t, d);
        prefetcher.add(q + s.q.row(nb, nh, 0), ldq, t, d);
        prefetcher.add(dq + s.dq.row(nb, nh, 0), lddq, t, d);
        if (nh % s.group() == 0) {
          prefetcher.add(dk + s.dk.row(nb, nkvh, 0), lddk, t, d);
          prefetcher.add(dv + s.dv.row(nb, nkvh, 0), lddv, t, d);
        }
      }
      prefetcher.spread(rowSteps);
      for (int64_t r = 0; r < t; ++r) {
        prefetcher.step();
        delta[r] = rowDot(doh + r * lddo, oh + r * ldo, d);
      }
      for (int64_t j0 = 0; j0 < t; j0 += kTile) {
        int64_t cols = std::min(kTile, t - j0);
        // Query tiles at or below the diagonal (i0 >= j0).
        for (int64_t i0 = j0; i0 < t; i0 += kTile) {
          int64_t rows = std::min(kTile, t - i0);
          gemmNNInto(rows, cols, d, s.scale, qh + i0 * ldq, ldq, kT.data() + j0,
                     t, p.data(), kTile);
          gemmNNInto(rows, cols, d, 1.0f, doh + i0 * lddo, lddo, vT.data() + j0,
                     t, dp.data(), kTile);
          for (int64_t r = 0; r < rows; ++r) {
            prefetcher.step();
            int64_t visible = std::min(cols, i0 + r - j0 + 1);
            float *pr = p.data() + r * kTile, *dpr = dp.data() + r * kTile;
            float rowLse = lh[i0 + r], rowDelta = delta[i0 + r];
            softmaxGradRow(pr, dpr, visible, rowLse, rowDelta);
            for (int64_t c = visible; c < cols; ++c)
              pr[c] = dpr[c] = 0.0f;
          }
          // The first contribution to a tile of dq (from the first key
          // tile), dk or dv (from the diagonal query tile of the kv head's
          // first head) overwrites it: the gradients are not zeroed first.
          float kvBeta = i0 == j0 && h % s.group() == 0 ? 0.0f : 1.0f;
          gemmTN(cols, d, rows, 1.0f, p.data(), kTile, doh + i0 * lddo, lddo,
                 kvBeta, dvh + j0 * lddv, lddv);
          gemmNN(rows, d, cols, s.scale, dp.data(), kTile, kh + j0 * ldk, ldk,
                 j0 == 0 ? 0.0f : 1.0f, dqh + i0 * lddq, lddq);
          gemmTN(cols, d, rows, s.scale, dp.data(), kTile, qh + i0 * ldq, ldq,
                 kvBeta, dkh + j0 * lddk, lddk);
        }
      }
    }
}
