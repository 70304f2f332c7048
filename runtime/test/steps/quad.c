/*===- quad.c - A hand-written step: loss = sum(w * w) ----------------------===
 *
 * Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
 *
 *===----------------------------------------------------------------------===
 *
 * The step of quad.manifest.json, written by hand against the step ABI the
 * compiler targets (docs/runtime.md, "Artifacts"), so zshard-run can be
 * tested without the compiler:
 *
 *   arguments  0 w [3] (init ones)  1 w.exp_avg [3] (zeros)  2 lr  3 step
 *   results    0 loss = sum(w * w)  1 w - lr * 2w  2 w.exp_avg + step
 *
 * So loss at step s is 3 (1 - 2 lr)^(2 (s - 1)), and after steps 1..N every
 * element of w.exp_avg is N (N + 1) / 2. The loss goes through
 * zshard_rt_step_sgemm on a buffer from _mlir_memref_to_llvm_alloc, as
 * compiled code does. A broken buffer contract (misaligned, aliased) makes
 * the loss NaN.
 *
 * Variants for the loader's error tests: -DQUAD_SIGNATURE="..." (a wrong
 * signature), -DQUAD_NO_SIGNATURE (no signature function),
 * -DQUAD_UNRESOLVED (a symbol nothing defines), -DQUAD_MGPU (references
 * MLIR's GPU host ABI, mgpuStreamCreate, on a path never taken: it loads
 * only on a runtime built with CUDA).
 *
 *===----------------------------------------------------------------------===*/

#include "zshard/runtime/zshard_rt.h"

#include <math.h>
#include <stdint.h>

#ifndef QUAD_SIGNATURE
#define QUAD_SIGNATURE "dbb7bd2d18a643f3"
#endif

#define EXPORT __attribute__((visibility("default")))

#ifdef QUAD_UNRESOLVED
extern void zshard_test_symbol_nobody_defines(void);
#endif
#ifdef QUAD_MGPU
extern void *mgpuStreamCreate(void);
#endif

#ifndef QUAD_NO_SIGNATURE
EXPORT const char *zshard_step_signature(void);
EXPORT const char *zshard_step_signature(void) { return QUAD_SIGNATURE; }
#endif

static int aligned(const void *p) { return ((uintptr_t)p % 64) == 0; }

EXPORT void zshard_step(void **buffers);
EXPORT void zshard_step(void **buffers) {
  const float *w = (const float *)buffers[0];
  const float *m = (const float *)buffers[1];
  float lr = *(const float *)buffers[2];
  float step = *(const float *)buffers[3];
  float *loss = (float *)buffers[4];
  float *wOut = (float *)buffers[5];
  float *mOut = (float *)buffers[6];
#ifdef QUAD_UNRESOLVED
  zshard_test_symbol_nobody_defines();
#endif
#ifdef QUAD_MGPU
  if (step < -1.0f) /* never: the symbol only has to resolve */
    (void)mgpuStreamCreate();
#endif

  /* loss = w^T w as a 1x3 @ 3x1 product accumulating into a zeroed buffer. */
  float *acc = (float *)_mlir_memref_to_llvm_alloc(sizeof(float));
  *acc = 0.0f;
  zshard_rt_step_sgemm(0, 0, 1, 1, 1, 3, w, 3, 0, w, 1, 0, acc, 1, 0, 1);
  *loss = *acc;
  _mlir_memref_to_llvm_free(acc);

  int ok = 1;
  for (int i = 0; i < 7; ++i)
    ok &= aligned(buffers[i]);
  for (int i = 4; i < 7; ++i)
    for (int j = 0; j < 4; ++j)
      ok &= buffers[i] != buffers[j];
  if (!ok)
    *loss = NAN;

  for (int i = 0; i < 3; ++i) {
    wOut[i] = w[i] - lr * 2.0f * w[i];
    mOut[i] = m[i] + step;
  }
}
