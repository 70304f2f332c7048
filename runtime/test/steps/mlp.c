/*===- mlp.c - A hand-written one-layer MLP step with AdamW -----------------===
 *
 * Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
 *
 *===----------------------------------------------------------------------===
 *
 * The step of mlp.manifest.json: docs/models.md's `mlp` with widths 4,3 and
 * the mse loss (one linear layer, y = x W + b), its backward, and AdamW with
 * the models.md defaults (beta1 0.9, beta2 0.95, eps 1e-8, weight decay 0.1
 * for W only), all in float, through the runtime's sgemm and allocation
 * hooks as compiled code would. python/zshard_ref computes the same step, so
 * zshard-run on this artifact can be checked against the reference.
 *
 *===----------------------------------------------------------------------===*/

#include "zshard/runtime/zshard_rt.h"

#include <math.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define B 5
#define DIN 4
#define DOUT 3

EXPORT const char *zshard_step_signature(void);
EXPORT const char *zshard_step_signature(void) { return "262042d1864184ab"; }

static void adamw(int n, const float *p, const float *g, const float *m,
                  const float *v, float lr, float step, int decay, float *pOut,
                  float *mOut, float *vOut) {
  const float beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, wd = 0.1f;
  float bc1 = 1.0f - powf(beta1, step);
  float bc2 = 1.0f - powf(beta2, step);
  for (int i = 0; i < n; ++i) {
    float q = p[i];
    if (decay)
      q = q - lr * wd * q;
    float mi = beta1 * m[i] + (1.0f - beta1) * g[i];
    float vi = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
    float mHat = mi / bc1;
    float vHat = vi / bc2;
    pOut[i] = q - lr * mHat / (sqrtf(vHat) + eps);
    mOut[i] = mi;
    vOut[i] = vi;
  }
}

EXPORT void zshard_step(void **buffers);
EXPORT void zshard_step(void **buffers) {
  const float *w = (const float *)buffers[0];
  const float *bias = (const float *)buffers[1];
  const float *wM = (const float *)buffers[2];
  const float *wV = (const float *)buffers[3];
  const float *bM = (const float *)buffers[4];
  const float *bV = (const float *)buffers[5];
  const float *x = (const float *)buffers[6];
  const float *target = (const float *)buffers[7];
  float lr = *(const float *)buffers[8];
  float step = *(const float *)buffers[9];
  float *loss = (float *)buffers[10];

  /* Forward: y = x W + b; diff = y - target; loss = mean(diff^2). */
  float *y = (float *)_mlir_memref_to_llvm_aligned_alloc(
      128, B * DOUT * sizeof(float));
  memset(y, 0, B * DOUT * sizeof(float));
  zshard_rt_step_sgemm(0, 0, 1, B, DOUT, DIN, x, DIN, 0, w, DOUT, 0, y, DOUT, 0,
                       1);
  float sum = 0.0f;
  for (int b = 0; b < B; ++b)
    for (int k = 0; k < DOUT; ++k) {
      float d = y[b * DOUT + k] + bias[k] - target[b * DOUT + k];
      y[b * DOUT + k] = d; /* y now holds diff */
      sum += d * d;
    }
  *loss = sum / (float)(B * DOUT);

  /* Backward: dy = diff * (2 / N); dW = x^T dy; db = sum over b of dy. */
  float scale = 2.0f * 1.0f / (float)(B * DOUT);
  for (int i = 0; i < B * DOUT; ++i)
    y[i] = y[i] * scale;
  float *dW = (float *)_mlir_memref_to_llvm_alloc(DIN * DOUT * sizeof(float));
  float db[DOUT] = {0};
  memset(dW, 0, DIN * DOUT * sizeof(float));
  zshard_rt_step_sgemm(1, 0, 1, DIN, DOUT, B, x, DIN, 0, y, DOUT, 0, dW, DOUT,
                       0, 1);
  for (int b = 0; b < B; ++b)
    for (int k = 0; k < DOUT; ++k)
      db[k] += y[b * DOUT + k];

  adamw(DIN * DOUT, w, dW, wM, wV, lr, step, 1, (float *)buffers[11],
        (float *)buffers[13], (float *)buffers[14]);
  adamw(DOUT, bias, db, bM, bV, lr, step, 0, (float *)buffers[12],
        (float *)buffers[15], (float *)buffers[16]);
  _mlir_memref_to_llvm_free(dW);
  _mlir_memref_to_llvm_free(y);
}
