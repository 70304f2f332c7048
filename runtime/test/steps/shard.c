/*===- shard.c - A hand-written sharded step
 *---------------------------------===
 *
 * Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
 *
 *===----------------------------------------------------------------------===
 *
 * The step of shard<N>.manifest.json (N = 1, 2, 3 ranks on grid "world"
 * [N]) and, built with -DSHARD_UNSHARDED, of shard-unsharded.manifest.json:
 * the same model and optimizer as one SPMD program over a sharded unit, and
 * as an ordinary single-rank step. zshard-run can so be tested on N ranks
 * without the compiler, and every rank count must follow the unsharded run.
 *
 * The model: unit "h.0" (full_shard over axis 0) flattens
 *   h.0.w [2, 3]  normal(0, 0.5)   at offset 0
 *   h.0.b [6]     uniform(-1, 1)   at offset 7 (element 6 is a gap)
 * into a padded buffer of P = N * S elements (S = ceil(13 / N): 13, 7, 5),
 * rank c holding elements [c S, (c + 1) S); its slots are exp_avg (zeros)
 * and master (init "param"). Unit "ln" (no_shard) is the replicated param
 * ln.g [3] (ones) with an ordinary opt_state ln.g.exp_avg (zeros). The
 * batch: x [B, 2] and target [B, 1], B = 6 / N rows per rank (a global
 * batch of 6).
 *
 * Each rank, with p the whole flat buffer (all-gathered, started and waited
 * for while the batch scalar is computed) and g = ln.g:
 *   coef = mean over its rows i of (1 + x[i,0]^2 + 0.5 target[i]^2)
 *   loss = coef * (sum p^2 + sum g^2) / 2        (this rank's batch;
 *          sum p^2 through zshard_rt_step_sgemm, so rank threads call BLAS
 *          at once)
 *   grad p = coef * p, reduce-scattered with avg over axis 0;
 *   grad g = coef * g, all-reduced with avg;
 *   exp_avg' = 0.9 exp_avg + grad, master' = master - lr exp_avg',
 *   p' = master' (ln.g: g' = g - lr exp_avg').
 * So the mean of the ranks' losses and every update equal the unsharded
 * run's with the global batch, up to the rounding of the averages.
 *
 * Before its collectives the step names them by unit, as compiled steps do
 * (zshard_rt_step_set_collective_unit: "h.0" is unit 0, "ln" unit 1), so
 * traces show "all_gather h.0", "reduce_scatter h.0" and "all_reduce ln".
 *
 * The loss is NaN when something is off: the grid is not [N], the rank's
 * coordinate is outside it, the gathered padding is not zero, or a buffer
 * is misaligned.
 *
 *===----------------------------------------------------------------------===*/

#include "zshard/runtime/zshard_rt.h"

#include <math.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

#define W_NUMEL 6
#define B_OFFSET 7
#define B_NUMEL 6
#define G_NUMEL 3
#define GLOBAL_BATCH 6

#ifdef SHARD_UNSHARDED
#define SHARD_RANKS 1
#define SHARD_SIZE 13
#endif
#define PADDED (SHARD_RANKS * SHARD_SIZE)
#define BATCH (GLOBAL_BATCH / SHARD_RANKS)

EXPORT const char *zshard_step_signature(void);
EXPORT const char *zshard_step_signature(void) { return SHARD_SIGNATURE; }

static int aligned(const void *p) { return ((uintptr_t)p % 64) == 0; }

/* The optimizer on n elements. */
static void update(int64_t n, const float *grad, const float *m,
                   const float *master, float lr, float *mOut, float *masterOut,
                   float *pOut) {
  for (int64_t k = 0; k < n; ++k) {
    mOut[k] = 0.9f * m[k] + grad[k];
    masterOut[k] = master[k] - lr * mOut[k];
    pOut[k] = masterOut[k];
  }
}

/* sum p^2 over the flat buffer, as a 1xP @ Px1 product through the step
 * ABI's sgemm (so rank threads call BLAS concurrently), accumulated into a
 * hook-allocated float. */
static float sumOfSquares(const float *p, int64_t n) {
  float *acc = (float *)_mlir_memref_to_llvm_alloc(sizeof(float));
  *acc = 0.0f;
  zshard_rt_step_sgemm(0, 0, 1, 1, 1, n, p, n, 0, p, 1, 0, acc, 1, 0, 1);
  float sum = *acc;
  _mlir_memref_to_llvm_free(acc);
  return sum;
}

static float batchCoef(const float *x, const float *target) {
  float coef = 0.0f;
  for (int i = 0; i < BATCH; ++i)
    coef += 1.0f + x[2 * i] * x[2 * i] + 0.5f * target[i] * target[i];
  return coef / (float)BATCH;
}

EXPORT void zshard_step(void **buffers);

#ifndef SHARD_UNSHARDED

static int isMember(int64_t j) {
  return j < W_NUMEL || (j >= B_OFFSET && j < B_OFFSET + B_NUMEL);
}

EXPORT void zshard_step(void **buffers) {
  const float *shard = (const float *)buffers[0];
  const float *m = (const float *)buffers[1];
  const float *master = (const float *)buffers[2];
  const float *g = (const float *)buffers[3];
  const float *gm = (const float *)buffers[4];
  const float *x = (const float *)buffers[5];
  const float *target = (const float *)buffers[6];
  float lr = *(const float *)buffers[7];
  float *loss = (float *)buffers[9];
  float *shardOut = (float *)buffers[10];
  float *mOut = (float *)buffers[11];
  float *masterOut = (float *)buffers[12];
  float *gOut = (float *)buffers[13];
  float *gmOut = (float *)buffers[14];

  int ok = zshard_rt_step_grid_size(0) == SHARD_RANKS;
  int64_t coord = zshard_rt_step_grid_coord(0);
  ok &= coord >= 0 && coord < SHARD_RANKS;
  for (int i = 0; i < 15; ++i)
    ok &= aligned(buffers[i]);

  float *full = (float *)_mlir_memref_to_llvm_alloc(PADDED * sizeof(float));
  float *grad = (float *)_mlir_memref_to_llvm_alloc(PADDED * sizeof(float));
  zshard_rt_step_set_collective_unit(0);
  int64_t gather = zshard_rt_step_all_gather_start(1, shard, full, SHARD_SIZE,
                                                   ZSHARD_RT_COMM_F32);
  float coef = batchCoef(x, target);
  zshard_rt_step_wait(gather);

  float sum = sumOfSquares(full, PADDED);
  for (int64_t j = 0; j < PADDED; ++j) {
    if (!isMember(j) && full[j] != 0.0f)
      ok = 0;
    grad[j] = coef * full[j];
  }
  float gradG[G_NUMEL];
  for (int k = 0; k < G_NUMEL; ++k) {
    sum += g[k] * g[k];
    gradG[k] = coef * g[k];
  }
  *loss = ok ? coef * sum / 2.0f : NAN;

  float gradShard[SHARD_SIZE];
  zshard_rt_step_reduce_scatter(1, grad, gradShard, SHARD_SIZE,
                                ZSHARD_RT_COMM_F32, ZSHARD_RT_REDUCE_AVG);
  zshard_rt_step_set_collective_unit(1);
  zshard_rt_step_all_reduce(1, gradG, gradG, G_NUMEL, ZSHARD_RT_COMM_F32,
                            ZSHARD_RT_REDUCE_AVG);
  zshard_rt_step_set_collective_unit(-1);
  update(SHARD_SIZE, gradShard, m, master, lr, mOut, masterOut, shardOut);
  update(G_NUMEL, gradG, gm, g, lr, gmOut, gOut, gOut);
  _mlir_memref_to_llvm_free(grad);
  _mlir_memref_to_llvm_free(full);
}

#else

EXPORT void zshard_step(void **buffers) {
  const float *w = (const float *)buffers[0];
  const float *b = (const float *)buffers[1];
  const float *wm = (const float *)buffers[2];
  const float *bm = (const float *)buffers[3];
  const float *wMaster = (const float *)buffers[4];
  const float *bMaster = (const float *)buffers[5];
  const float *g = (const float *)buffers[6];
  const float *gm = (const float *)buffers[7];
  const float *x = (const float *)buffers[8];
  const float *target = (const float *)buffers[9];
  float lr = *(const float *)buffers[10];
  float *loss = (float *)buffers[12];
  float *wOut = (float *)buffers[13];
  float *bOut = (float *)buffers[14];
  float *wmOut = (float *)buffers[15];
  float *bmOut = (float *)buffers[16];
  float *wMasterOut = (float *)buffers[17];
  float *bMasterOut = (float *)buffers[18];
  float *gOut = (float *)buffers[19];
  float *gmOut = (float *)buffers[20];

  int ok = 1;
  for (int i = 0; i < 21; ++i)
    ok &= aligned(buffers[i]);
  float coef = batchCoef(x, target);
  float full[PADDED] = {0};
  for (int k = 0; k < W_NUMEL; ++k)
    full[k] = w[k];
  for (int k = 0; k < B_NUMEL; ++k)
    full[B_OFFSET + k] = b[k];
  float sum = sumOfSquares(full, PADDED);
  float gradW[W_NUMEL], gradB[B_NUMEL], gradG[G_NUMEL];
  for (int k = 0; k < W_NUMEL; ++k)
    gradW[k] = coef * w[k];
  for (int k = 0; k < B_NUMEL; ++k)
    gradB[k] = coef * b[k];
  for (int k = 0; k < G_NUMEL; ++k) {
    sum += g[k] * g[k];
    gradG[k] = coef * g[k];
  }
  *loss = ok ? coef * sum / 2.0f : NAN;
  update(W_NUMEL, gradW, wm, wMaster, lr, wmOut, wMasterOut, wOut);
  update(B_NUMEL, gradB, bm, bMaster, lr, bmOut, bMasterOut, bOut);
  update(G_NUMEL, gradG, gm, g, lr, gmOut, gOut, gOut);
}

#endif
