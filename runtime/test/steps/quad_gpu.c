/*===- quad_gpu.c - The quad step on a GPU, through the step ABI -----------===
 *
 * Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
 *
 *===----------------------------------------------------------------------===
 *
 * quad.c's model and update (w [3], loss w^T w, w <- w - 2 lr w,
 * w.exp_avg <- w.exp_avg + step) for zshard-run --device cuda: its buffers
 * are device memory, so it never touches them on the host. It works the way
 * compiled GPU code does: temporaries from the MLIR hooks (device memory),
 * products through zshard_rt_step_sgemm (cuBLAS), fills and copies through
 * MLIR's GPU host ABI on the runtime's compute stream:
 *
 *   loss      = 0 + w^T w                          (sgemm into a temporary)
 *   w_out     = 0 + w (3x1) * [1 - 2 lr] (1x1)     (sgemm)
 *   exp_avg'  = 0 + exp_avg * [1] + ones (3x1) * step (1x1)
 *
 * Same manifest (and signature) as quad.c; for the requires-gpu runner test.
 *
 *===----------------------------------------------------------------------===*/

#include "zshard/runtime/zshard_rt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* MLIR's GPU host ABI, as gpu-to-llvm declares it. */
extern void *mgpuStreamCreate(void);
extern void mgpuStreamSynchronize(void *stream);
extern void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
extern void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream);

EXPORT const char *zshard_step_signature(void);
EXPORT const char *zshard_step_signature(void) { return "dbb7bd2d18a643f3"; }

EXPORT void zshard_step(void **buffers);
EXPORT void zshard_step(void **buffers) {
  const float *w = (const float *)buffers[0];
  const float *m = (const float *)buffers[1];
  const float *lr = (const float *)buffers[2];
  const float *step = (const float *)buffers[3];
  float *loss = (float *)buffers[4];
  float *wOut = (float *)buffers[5];
  float *mOut = (float *)buffers[6];
  void *stream = mgpuStreamCreate();

  /* The learning rate, read back to the host (a host scalar for the update). */
  float hostLr = 0.0f;
  mgpuMemcpy(&hostLr, (void *)lr, sizeof(float), stream);
  mgpuStreamSynchronize(stream);
  float coef = 1.0f - 2.0f * hostLr;

  /* Device temporaries: the loss accumulator, [coef], [1], ones(3). */
  float *acc = (float *)_mlir_memref_to_llvm_alloc(6 * sizeof(float));
  float *dCoef = acc + 1, *one = acc + 2, *ones = acc + 3;
  mgpuMemset32(acc, 0u, 1, stream);
  mgpuMemcpy(dCoef, &coef, sizeof(float), stream);
  mgpuMemset32(one, 0x3f800000u, 4, stream); /* one and ones: 1.0f */

  zshard_rt_step_sgemm(0, 0, 1, 1, 1, 3, w, 3, 0, w, 1, 0, acc, 1, 0, 1);
  mgpuMemcpy(loss, acc, sizeof(float), stream);

  mgpuMemset32(wOut, 0u, 3, stream);
  zshard_rt_step_sgemm(0, 0, 1, 3, 1, 1, w, 1, 0, dCoef, 1, 0, wOut, 1, 0, 1);
  mgpuMemset32(mOut, 0u, 3, stream);
  zshard_rt_step_sgemm(0, 0, 1, 3, 1, 1, m, 1, 0, one, 1, 0, mOut, 1, 0, 1);
  zshard_rt_step_sgemm(0, 0, 1, 3, 1, 1, ones, 1, 0, step, 1, 0, mOut, 1, 0, 1);

  /* The host's coef must outlive the copy that reads it. */
  mgpuStreamSynchronize(stream);
  _mlir_memref_to_llvm_free(acc);
}
