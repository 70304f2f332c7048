/* STREAM-like triad, a[i] = b[i] + s * c[i] on f32, one thread.
 *
 * bench/op_classes.py compiles it with -O3 -march=native in the same run as
 * the step it profiles, so that the step's kernels are measured against the
 * bandwidth this host gives one core. Bytes counted as STREAM does: 12 per
 * element (two loads, one store; the write-allocate read is not counted).
 *
 * usage: stream_triad N_FLOATS REPS   prints {"n":..,"best_gbps":..,...}
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void __attribute__((noinline))
triad(float *restrict a, const float *restrict b, const float *restrict c,
      float s, long n) {
  for (long i = 0; i < n; ++i)
    a[i] = b[i] + s * c[i];
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N_FLOATS REPS\n", argv[0]);
    return 1;
  }
  long n = atol(argv[1]);
  int reps = atoi(argv[2]);
  if (n <= 0 || reps <= 0)
    return 1;
  float *a = aligned_alloc(64, ((size_t)n * 4 + 63) / 64 * 64);
  float *b = aligned_alloc(64, ((size_t)n * 4 + 63) / 64 * 64);
  float *c = aligned_alloc(64, ((size_t)n * 4 + 63) / 64 * 64);
  if (!a || !b || !c)
    return 1;
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
  double best = 1e30, total = 0.0;
  for (int r = 0; r < reps; ++r) {
    double start = now();
    triad(a, b, c, 3.0f, n);
    double t = now() - start;
    total += t;
    if (t < best)
      best = t;
  }
  double bytes = 12.0 * (double)n;
  /* Read a result back so the loop is not dead. */
  printf("{\"n\": %ld, \"bytes\": %.0f, \"reps\": %d, \"best_gbps\": %.3f, "
         "\"mean_gbps\": %.3f, \"check\": %.1f}\n",
         n, bytes, reps, bytes / best / 1e9, bytes * reps / total / 1e9,
         (double)a[n / 2]);
  free(a);
  free(b);
  free(c);
  return 0;
}
