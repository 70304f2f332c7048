/*===- tokens.c - A hand-written step over token batches --------------------===
 *
 * Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
 *
 *===----------------------------------------------------------------------===
 *
 * The step of tokens.manifest.json: the batch arguments of a GPT step
 * (tokens, targets i32 [2, 8]) and its embedding (wte [16, 4]), with a loss
 * that shows which batch came in:
 *
 *   loss = (sum(tokens) + 0.5 sum(targets)) / (B T)
 *          + 1000 * #{(b, t < T-1) : targets[b, t] != tokens[b, t + 1]}
 *          + 1e6 * #{tokens or targets outside [0, 16)}
 *   wte  <- wte * (1 - lr)
 *
 * so every batch a data source hands over must be a window of one stream
 * (targets shifted by one) within the vocabulary to keep the loss small.
 *
 * The same step under other names (tokens-idx.manifest.json: nanoGPT's
 * idx/targets and transformer.wte.weight; tokens-named.manifest.json:
 * ids/next and emb) is built with -DTOKENS_SIGNATURE="<its signature>".
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))
#define B 2
#define T 8
#define V 16
#define D 4

#ifndef TOKENS_SIGNATURE
#define TOKENS_SIGNATURE "8886734d2a30e722"
#endif

EXPORT const char *zshard_step_signature(void);
EXPORT const char *zshard_step_signature(void) { return TOKENS_SIGNATURE; }

EXPORT void zshard_step(void **buffers);
EXPORT void zshard_step(void **buffers) {
  const float *wte = (const float *)buffers[0];
  const int32_t *tokens = (const int32_t *)buffers[1];
  const int32_t *targets = (const int32_t *)buffers[2];
  float lr = *(const float *)buffers[3];
  float *loss = (float *)buffers[4];
  float *wteOut = (float *)buffers[5];

  float sum = 0.0f;
  int mismatches = 0, outside = 0;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      int32_t x = tokens[b * T + t], y = targets[b * T + t];
      sum += (float)x + 0.5f * (float)y;
      outside += x < 0 || x >= V || y < 0 || y >= V;
      if (t + 1 < T && y != tokens[b * T + t + 1])
        ++mismatches;
    }
  *loss = sum / (float)(B * T) + 1000.0f * (float)mismatches +
          1e6f * (float)outside;
  for (int i = 0; i < V * D; ++i)
    wteOut[i] = wte[i] * (1.0f - lr);
}
