//===- FlashAttention.cu - tiled causal attention kernels on CUDA ---------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The structure of cpu/FlashAttention.cpp on the GPU: tiles of kTile key
// (or query) rows staged in shared memory, an online softmax in the
// forward, scores recomputed from lse in the backward, nothing of size
// seq x seq anywhere. One thread owns one row:
//
//   forward   grid (query tiles, batch * heads): thread = query row t; per
//             key tile at or left of the diagonal, the running max, sum and
//             accumulator of its row; writes out[t] and lse[t].
//   dq        grid (query tiles, batch * heads): thread = query row t;
//             delta = dout[t] . out[t], then per key tile
//             ds = p (dout[t] . v[u] - delta), dq[t] += scale ds k[u].
//   dv        grid (key tiles, batch * kv heads): thread = key row u; per
//             head of the group and query tile at or below the diagonal
//             (q, dout and lse staged), dv[u] += p dout[t];
//   dk        the same grid, q, dout, lse and delta staged:
//             dk[u] += scale ds q[t].
// No atomics: each output row has one owner, so the result is
// deterministic.
//
// Each kernel is a template over the head size D: for the common sizes (32,
// 64, 128) the loops over a row are unrolled and the thread's rows live in
// registers; D = 0 is any size up to kCudaAttentionMaxHeadDim, its rows in
// local memory. dv and dk are two kernels so that a thread holds three rows
// (k, v and dk; k and dv), not four. Measured on an H200 (gpu-check's
// d 1024, 16 heads, seq 1024, batch 8, head size 64), per layer: 63 ms with
// the rows in local memory and tiles of 32 (ncu); 21.6 ms in registers
// (ncu); with tiles of 64 (two warps a block) the 24-layer step went from
// 545 to 377 ms, about 14.6 ms a layer. Taking 4 keys at a time (more
// independent products in flight) or 4 partial sums per dot product did
// not help (587 and 544 ms a step against 545).
//
//===----------------------------------------------------------------------===//

#include "cuda/FlashAttention.h"

#include <math_constants.h>

using namespace zshard::rt;

namespace {

__device__ int64_t groupOf(const StepAttentionShape &s) {
  return s.heads / s.kvHeads;
}

/// Rows a block stages and threads a block (one row each).
constexpr int kTile = 64;
constexpr int kMaxD = int(kCudaAttentionMaxHeadDim);

/// A row of a thread: the head size itself when D is known at compile time.
template <int D> constexpr int kRowSize = D > 0 ? D : kMaxD;
/// Loops over a row unrolled fully when D is known, else not at all.
template <int D> constexpr int kUnroll = D > 0 ? D : 1;

template <int D>
__device__ __forceinline__ int headDim(const StepAttentionShape &s) {
  return D > 0 ? D : int(s.headDim);
}

template <int D>
__device__ __forceinline__ float dotRow(const float *a, const float *b, int d) {
  float sum = 0;
  // clang-format off
#pragma unroll kUnroll<D>
  // clang-format on
  for (int e = 0; e < (D > 0 ? D : d); ++e)
    sum += a[e] * b[e];
  return sum;
}

/// Copies rows [first, first + kTile) of a [seq, d] matrix whose rows are
/// `stride` apart into `tile` (rows past seq are left as they are), all
/// threads of the block.
__device__ void stageRows(float *tile, const float *matrix, int64_t first,
                          int64_t seq, int d, int64_t stride) {
  for (int i = threadIdx.x; i < kTile * d; i += blockDim.x) {
    int64_t row = first + i / d;
    if (row < seq)
      tile[i] = matrix[row * stride + i % d];
  }
}

/// for (e < d) body(e), unrolled when D is known.
#define ZSHARD_FOR_ROW(e, body)                                                \
  _Pragma("unroll kUnroll<D>") for (int e = 0; e < (D > 0 ? D : d); ++e) {     \
    body;                                                                      \
  }

template <int D>
__global__ void forwardKernel(StepAttentionShape s, const float *q,
                              const float *k, const float *v, float *out,
                              float *lse) {
  extern __shared__ float shared[];
  const int d = headDim<D>(s);
  float *kTileRows = shared, *vTileRows = shared + kTile * d;
  int64_t bh = blockIdx.y, b = bh / s.heads, h = bh % s.heads;
  const float *kh = k + s.k.row(b, h / groupOf(s), 0);
  const float *vh = v + s.v.row(b, h / groupOf(s), 0);
  int64_t first = int64_t(blockIdx.x) * kTile, t = first + threadIdx.x;
  bool active = t < s.seq;
  const float *qRowIn = q + s.q.row(b, h, t);

  float qRow[kRowSize<D>], acc[kRowSize<D>];
  ZSHARD_FOR_ROW(e, {
    qRow[e] = active ? qRowIn[e] : 0.0f;
    acc[e] = 0.0f;
  })
  float m = -CUDART_INF_F, l = 0.0f;
  for (int64_t j0 = 0; j0 <= first; j0 += kTile) {
    __syncthreads();
    stageRows(kTileRows, kh, j0, s.seq, d, s.k.seq);
    stageRows(vTileRows, vh, j0, s.seq, d, s.v.seq);
    __syncthreads();
    if (!active)
      continue;
    for (int c = 0; c < kTile && j0 + c <= t; ++c) {
      float score = s.scale * dotRow<D>(qRow, kTileRows + c * d, d);
      float newMax = fmaxf(m, score);
      float correction = __expf(m - newMax), p = __expf(score - newMax);
      l = l * correction + p;
      const float *vc = vTileRows + c * d;
      ZSHARD_FOR_ROW(e, acc[e] = acc[e] * correction + p * vc[e])
      m = newMax;
    }
  }
  if (!active)
    return;
  float inv = 1.0f / l;
  float *outRow = out + s.out.row(b, h, t);
  ZSHARD_FOR_ROW(e, outRow[e] = acc[e] * inv)
  lse[bh * s.seq + t] = m + __logf(l);
}

template <int D>
__global__ void dqKernel(StepAttentionShape s, const float *q, const float *k,
                         const float *v, const float *out, const float *lse,
                         const float *dout, float *dq) {
  extern __shared__ float shared[];
  const int d = headDim<D>(s);
  float *kTileRows = shared, *vTileRows = shared + kTile * d;
  int64_t bh = blockIdx.y, b = bh / s.heads, h = bh % s.heads;
  const float *kh = k + s.k.row(b, h / groupOf(s), 0);
  const float *vh = v + s.v.row(b, h / groupOf(s), 0);
  int64_t first = int64_t(blockIdx.x) * kTile, t = first + threadIdx.x;
  bool active = t < s.seq;
  const float *qRowIn = q + s.q.row(b, h, t);
  const float *doRowIn = dout + s.dout.row(b, h, t);
  const float *outRow = out + s.out.row(b, h, t);

  float qRow[kRowSize<D>], doRow[kRowSize<D>], acc[kRowSize<D>];
  float delta = 0.0f, rowLse = active ? lse[bh * s.seq + t] : 0.0f;
  ZSHARD_FOR_ROW(e, {
    qRow[e] = active ? qRowIn[e] : 0.0f;
    doRow[e] = active ? doRowIn[e] : 0.0f;
    delta += active ? doRow[e] * outRow[e] : 0.0f;
    acc[e] = 0.0f;
  })
  for (int64_t j0 = 0; j0 <= first; j0 += kTile) {
    __syncthreads();
    stageRows(kTileRows, kh, j0, s.seq, d, s.k.seq);
    stageRows(vTileRows, vh, j0, s.seq, d, s.v.seq);
    __syncthreads();
    if (!active)
      continue;
    for (int c = 0; c < kTile && j0 + c <= t; ++c) {
      const float *kc = kTileRows + c * d;
      float p = __expf(s.scale * dotRow<D>(qRow, kc, d) - rowLse);
      float ds = p * (dotRow<D>(doRow, vTileRows + c * d, d) - delta);
      ZSHARD_FOR_ROW(e, acc[e] += s.scale * ds * kc[e])
    }
  }
  if (!active)
    return;
  float *dqRow = dq + s.dq.row(b, h, t);
  ZSHARD_FOR_ROW(e, dqRow[e] = acc[e])
}

/// dv (kDk false) or dk (kDk true) of the key rows of one tile.
template <int D, bool kDk>
__global__ void dkvKernel(StepAttentionShape s, const float *q, const float *k,
                          const float *v, const float *out, const float *lse,
                          const float *dout, float *dkv) {
  extern __shared__ float shared[];
  const int d = headDim<D>(s);
  float *qTileRows = shared, *doTileRows = shared + kTile * d;
  float *lseTile = shared + 2 * kTile * d, *deltaTile = lseTile + kTile;
  int64_t bkv = blockIdx.y, b = bkv / s.kvHeads, kvh = bkv % s.kvHeads;
  int64_t first = int64_t(blockIdx.x) * kTile, u = first + threadIdx.x;
  bool active = u < s.seq;
  const float *kRowIn = k + s.k.row(b, kvh, u);
  const float *vRowIn = v + s.v.row(b, kvh, u);

  // v's row only for dk (ds needs dout . v); dv needs p alone.
  float kRow[kRowSize<D>], vRow[kDk ? kRowSize<D> : 1], acc[kRowSize<D>];
  ZSHARD_FOR_ROW(e, {
    kRow[e] = active ? kRowIn[e] : 0.0f;
    if constexpr (kDk)
      vRow[e] = active ? vRowIn[e] : 0.0f;
    acc[e] = 0.0f;
  })
  for (int64_t h = kvh * groupOf(s); h < (kvh + 1) * groupOf(s); ++h) {
    int64_t bh = b * s.heads + h;
    const float *qh = q + s.q.row(b, h, 0), *oh = out + s.out.row(b, h, 0);
    const float *doh = dout + s.dout.row(b, h, 0), *lh = lse + bh * s.seq;
    for (int64_t i0 = first; i0 < s.seq; i0 += kTile) {
      __syncthreads();
      stageRows(qTileRows, qh, i0, s.seq, d, s.q.seq);
      stageRows(doTileRows, doh, i0, s.seq, d, s.dout.seq);
      int64_t t = i0 + threadIdx.x;
      if (t < s.seq) {
        lseTile[threadIdx.x] = lh[t];
        if constexpr (kDk)
          deltaTile[threadIdx.x] =
              dotRow<D>(doh + t * s.dout.seq, oh + t * s.out.seq, d);
      }
      __syncthreads();
      if (!active)
        continue;
      for (int r = 0; r < kTile && i0 + r < s.seq; ++r) {
        if (i0 + r < u)
          continue;
        const float *qt = qTileRows + r * d, *dot = doTileRows + r * d;
        float p = __expf(s.scale * dotRow<D>(qt, kRow, d) - lseTile[r]);
        if constexpr (kDk) {
          float ds = p * (dotRow<D>(dot, vRow, d) - deltaTile[r]);
          ZSHARD_FOR_ROW(e, acc[e] += s.scale * ds * qt[e])
        } else {
          ZSHARD_FOR_ROW(e, acc[e] += p * dot[e])
        }
      }
    }
  }
  if (!active)
    return;
  float *dkvRow = dkv + (kDk ? s.dk : s.dv).row(b, kvh, u);
  ZSHARD_FOR_ROW(e, dkvRow[e] = acc[e])
}

#undef ZSHARD_FOR_ROW

unsigned tiles(int64_t seq) { return unsigned((seq + kTile - 1) / kTile); }

template <typename Kernel>
cudaError_t allowShared(Kernel kernel, size_t bytes) {
  return cudaFuncSetAttribute(kernel,
                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                              int(bytes));
}

template <int D>
cudaError_t forward(cudaStream_t stream, const StepAttentionShape &s,
                    const float *q, const float *k, const float *v, float *out,
                    float *lse) {
  size_t bytes = 2 * kTile * s.headDim * sizeof(float);
  if (cudaError_t error = allowShared(forwardKernel<D>, bytes))
    return error;
  dim3 grid(tiles(s.seq), unsigned(s.batch * s.heads));
  forwardKernel<D><<<grid, kTile, bytes, stream>>>(s, q, k, v, out, lse);
  return cudaGetLastError();
}

template <int D>
cudaError_t backward(cudaStream_t stream, const StepAttentionShape &s,
                     const float *q, const float *k, const float *v,
                     const float *out, const float *lse, const float *dout,
                     float *dq, float *dk, float *dv) {
  size_t dqBytes = 2 * kTile * s.headDim * sizeof(float);
  size_t dkvBytes = (2 * kTile * s.headDim + 2 * kTile) * sizeof(float);
  if (cudaError_t error = allowShared(dqKernel<D>, dqBytes))
    return error;
  if (cudaError_t error = allowShared(dkvKernel<D, false>, dkvBytes))
    return error;
  if (cudaError_t error = allowShared(dkvKernel<D, true>, dkvBytes))
    return error;
  dim3 dqGrid(tiles(s.seq), unsigned(s.batch * s.heads));
  dqKernel<D>
      <<<dqGrid, kTile, dqBytes, stream>>>(s, q, k, v, out, lse, dout, dq);
  if (cudaError_t error = cudaGetLastError())
    return error;
  dim3 dkvGrid(tiles(s.seq), unsigned(s.batch * s.kvHeads));
  dkvKernel<D, false>
      <<<dkvGrid, kTile, dkvBytes, stream>>>(s, q, k, v, out, lse, dout, dv);
  if (cudaError_t error = cudaGetLastError())
    return error;
  dkvKernel<D, true>
      <<<dkvGrid, kTile, dkvBytes, stream>>>(s, q, k, v, out, lse, dout, dk);
  return cudaGetLastError();
}

} // namespace

cudaError_t zshard::rt::launchAttentionForward(cudaStream_t stream,
                                               const StepAttentionShape &s,
                                               const float *q, const float *k,
                                               const float *v, float *out,
                                               float *lse) {
  switch (s.headDim) {
  case 32:
    return forward<32>(stream, s, q, k, v, out, lse);
  case 64:
    return forward<64>(stream, s, q, k, v, out, lse);
  case 128:
    return forward<128>(stream, s, q, k, v, out, lse);
  default:
    if (s.headDim > kMaxD)
      return cudaErrorInvalidValue;
    return forward<0>(stream, s, q, k, v, out, lse);
  }
}

cudaError_t zshard::rt::launchAttentionBackward(
    cudaStream_t stream, const StepAttentionShape &s, const float *q,
    const float *k, const float *v, const float *out, const float *lse,
    const float *dout, float *dq, float *dk, float *dv) {
  switch (s.headDim) {
  case 32:
    return backward<32>(stream, s, q, k, v, out, lse, dout, dq, dk, dv);
  case 64:
    return backward<64>(stream, s, q, k, v, out, lse, dout, dq, dk, dv);
  case 128:
    return backward<128>(stream, s, q, k, v, out, lse, dout, dq, dk, dv);
  default:
    if (s.headDim > kMaxD)
      return cudaErrorInvalidValue;
    return backward<0>(stream, s, q, k, v, out, lse, dout, dq, dk, dv);
  }
}
