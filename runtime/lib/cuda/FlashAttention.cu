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
//   dk, dv    grid (key tiles, batch * kv heads): thread = key row u; per
//             head of the group and query tile at or below the diagonal
//             (q, dout, lse and delta staged), dv[u] += p dout[t],
//             dk[u] += scale ds q[t]. No atomics: each output row has one
//             owner, so the result is deterministic.
//
//===----------------------------------------------------------------------===//

#include "cuda/FlashAttention.h"

#include <math_constants.h>

using namespace zshard::rt;

namespace {

__device__ int64_t groupOf(const StepAttentionShape &s) {
  return s.heads / s.kvHeads;
}

constexpr int kTile = 32;
constexpr int kMaxD = int(kCudaAttentionMaxHeadDim);

__device__ float dotRow(const float *a, const float *b, int d) {
  float sum = 0;
  for (int e = 0; e < d; ++e)
    sum += a[e] * b[e];
  return sum;
}

/// Copies rows [first, first + kTile) of a [seq, d] matrix into `tile`
/// (rows past seq are left as they are), all threads of the block.
__device__ void stageRows(float *tile, const float *matrix, int64_t first,
                          int64_t seq, int d) {
  for (int i = threadIdx.x; i < kTile * d; i += blockDim.x) {
    int64_t row = first + i / d;
    if (row < seq)
      tile[i] = matrix[row * d + i % d];
  }
}

__global__ void forwardKernel(StepAttentionShape s, const float *q,
                              const float *k, const float *v, float *out,
                              float *lse) {
  extern __shared__ float shared[];
  const int d = int(s.headDim);
  float *kTileRows = shared, *vTileRows = shared + kTile * d;
  int64_t bh = blockIdx.y, b = bh / s.heads, h = bh % s.heads;
  int64_t kvOffset = (b * s.kvHeads + h / groupOf(s)) * s.seq * d;
  const float *qh = q + bh * s.seq * d;
  int64_t first = int64_t(blockIdx.x) * kTile, t = first + threadIdx.x;
  bool active = t < s.seq;

  float qRow[kMaxD], acc[kMaxD];
  for (int e = 0; e < d; ++e) {
    qRow[e] = active ? qh[t * d + e] : 0.0f;
    acc[e] = 0.0f;
  }
  float m = -CUDART_INF_F, l = 0.0f;
  for (int64_t j0 = 0; j0 <= first; j0 += kTile) {
    __syncthreads();
    stageRows(kTileRows, k + kvOffset, j0, s.seq, d);
    stageRows(vTileRows, v + kvOffset, j0, s.seq, d);
    __syncthreads();
    if (!active)
      continue;
    for (int c = 0; c < kTile && j0 + c <= t; ++c) {
      float score = s.scale * dotRow(qRow, kTileRows + c * d, d);
      float newMax = fmaxf(m, score);
      float correction = __expf(m - newMax), p = __expf(score - newMax);
      l = l * correction + p;
      for (int e = 0; e < d; ++e)
        acc[e] = acc[e] * correction + p * vTileRows[c * d + e];
      m = newMax;
    }
  }
  if (!active)
    return;
  float inv = 1.0f / l;
  for (int e = 0; e < d; ++e)
    out[(bh * s.seq + t) * d + e] = acc[e] * inv;
  lse[bh * s.seq + t] = m + __logf(l);
}

__global__ void dqKernel(StepAttentionShape s, const float *q, const float *k,
                         const float *v, const float *out, const float *lse,
                         const float *dout, float *dq) {
  extern __shared__ float shared[];
  const int d = int(s.headDim);
  float *kTileRows = shared, *vTileRows = shared + kTile * d;
  int64_t bh = blockIdx.y, b = bh / s.heads, h = bh % s.heads;
  int64_t kvOffset = (b * s.kvHeads + h / groupOf(s)) * s.seq * d;
  int64_t first = int64_t(blockIdx.x) * kTile, t = first + threadIdx.x;
  bool active = t < s.seq;
  int64_t row = (bh * s.seq + t) * d;

  float qRow[kMaxD], doRow[kMaxD], acc[kMaxD];
  float delta = 0.0f, rowLse = active ? lse[bh * s.seq + t] : 0.0f;
  for (int e = 0; e < d; ++e) {
    qRow[e] = active ? q[row + e] : 0.0f;
    doRow[e] = active ? dout[row + e] : 0.0f;
    delta += active ? doRow[e] * out[row + e] : 0.0f;
    acc[e] = 0.0f;
  }
  for (int64_t j0 = 0; j0 <= first; j0 += kTile) {
    __syncthreads();
    stageRows(kTileRows, k + kvOffset, j0, s.seq, d);
    stageRows(vTileRows, v + kvOffset, j0, s.seq, d);
    __syncthreads();
    if (!active)
      continue;
    for (int c = 0; c < kTile && j0 + c <= t; ++c) {
      float p = __expf(s.scale * dotRow(qRow, kTileRows + c * d, d) - rowLse);
      float ds = p * (dotRow(doRow, vTileRows + c * d, d) - delta);
      for (int e = 0; e < d; ++e)
        acc[e] += s.scale * ds * kTileRows[c * d + e];
    }
  }
  if (!active)
    return;
  for (int e = 0; e < d; ++e)
    dq[row + e] = acc[e];
}

__global__ void dkdvKernel(StepAttentionShape s, const float *q,
                           const float *k, const float *v, const float *out,
                           const float *lse, const float *dout, float *dk,
                           float *dv) {
  extern __shared__ float shared[];
  const int d = int(s.headDim);
  float *qTileRows = shared, *doTileRows = shared + kTile * d;
  float *lseTile = shared + 2 * kTile * d, *deltaTile = lseTile + kTile;
  int64_t bkv = blockIdx.y, b = bkv / s.kvHeads, kvh = bkv % s.kvHeads;
  int64_t first = int64_t(blockIdx.x) * kTile, u = first + threadIdx.x;
  bool active = u < s.seq;
  int64_t row = (bkv * s.seq + u) * d;

  float kRow[kMaxD], vRow[kMaxD], dkAcc[kMaxD], dvAcc[kMaxD];
  for (int e = 0; e < d; ++e) {
    kRow[e] = active ? k[row + e] : 0.0f;
    vRow[e] = active ? v[row + e] : 0.0f;
    dkAcc[e] = dvAcc[e] = 0.0f;
  }
  for (int64_t h = kvh * groupOf(s); h < (kvh + 1) * groupOf(s); ++h) {
    int64_t bh = b * s.heads + h;
    const float *qh = q + bh * s.seq * d, *oh = out + bh * s.seq * d;
    const float *doh = dout + bh * s.seq * d, *lh = lse + bh * s.seq;
    for (int64_t i0 = first; i0 < s.seq; i0 += kTile) {
      __syncthreads();
      stageRows(qTileRows, qh, i0, s.seq, d);
      stageRows(doTileRows, doh, i0, s.seq, d);
      int64_t t = i0 + threadIdx.x;
      if (t < s.seq) {
        lseTile[threadIdx.x] = lh[t];
        deltaTile[threadIdx.x] = dotRow(doh + t * d, oh + t * d, d);
      }
      __syncthreads();
      if (!active)
        continue;
      for (int r = 0; r < kTile && i0 + r < s.seq; ++r) {
        if (i0 + r < u)
          continue;
        const float *qt = qTileRows + r * d, *dot = doTileRows + r * d;
        float p = __expf(s.scale * dotRow(qt, kRow, d) - lseTile[r]);
        float ds = p * (dotRow(dot, vRow, d) - deltaTile[r]);
        for (int e = 0; e < d; ++e) {
          dvAcc[e] += p * dot[e];
          dkAcc[e] += s.scale * ds * qt[e];
        }
      }
    }
  }
  if (!active)
    return;
  for (int e = 0; e < d; ++e) {
    dk[row + e] = dkAcc[e];
    dv[row + e] = dvAcc[e];
  }
}

unsigned tiles(int64_t seq) { return unsigned((seq + kTile - 1) / kTile); }

template <typename Kernel>
cudaError_t allowShared(Kernel kernel, size_t bytes) {
  return cudaFuncSetAttribute(kernel,
                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                              int(bytes));
}

} // namespace

cudaError_t zshard::rt::launchAttentionForward(cudaStream_t stream,
                                               const StepAttentionShape &s,
                                               const float *q, const float *k,
                                               const float *v, float *out,
                                               float *lse) {
  if (s.headDim > kMaxD)
    return cudaErrorInvalidValue;
  size_t bytes = 2 * kTile * s.headDim * sizeof(float);
  if (cudaError_t error = allowShared(forwardKernel, bytes))
    return error;
  dim3 grid(tiles(s.seq), unsigned(s.batch * s.heads));
  forwardKernel<<<grid, kTile, bytes, stream>>>(s, q, k, v, out, lse);
  return cudaGetLastError();
}

cudaError_t zshard::rt::launchAttentionBackward(
    cudaStream_t stream, const StepAttentionShape &s, const float *q,
    const float *k, const float *v, const float *out, const float *lse,
    const float *dout, float *dq, float *dk, float *dv) {
  if (s.headDim > kMaxD)
    return cudaErrorInvalidValue;
  size_t dqBytes = 2 * kTile * s.headDim * sizeof(float);
  size_t dkdvBytes = (2 * kTile * s.headDim + 2 * kTile) * sizeof(float);
  if (cudaError_t error = allowShared(dqKernel, dqBytes))
    return error;
  if (cudaError_t error = allowShared(dkdvKernel, dkdvBytes))
    return error;
  dim3 dqGrid(tiles(s.seq), unsigned(s.batch * s.heads));
  dqKernel<<<dqGrid, kTile, dqBytes, stream>>>(s, q, k, v, out, lse, dout, dq);
  if (cudaError_t error = cudaGetLastError())
    return error;
  dim3 dkdvGrid(tiles(s.seq), unsigned(s.batch * s.kvHeads));
  dkdvKernel<<<dkdvGrid, kTile, dkdvBytes, stream>>>(s, q, k, v, out, lse,
                                                     dout, dk, dv);
  return cudaGetLastError();
}
