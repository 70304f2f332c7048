//===- Sgemm.cpp - Row-major sgemm on OpenBLAS ----------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/Error.h"

#include <cblas.h>

#include <climits>
#include <cstdint>
#include <string>

using namespace zshard::rt;

namespace {

constexpr const char *entry = "zshard_rt_cpu_sgemm";

zshard_rt_status invalid(const std::string &what) {
  return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                  std::string(entry) + ": " + what);
}

bool fitsInt(int64_t x) { return x >= 0 && x <= INT_MAX; }

/// Checks a leading dimension against the columns of the stored matrix.
zshard_rt_status checkLeadingDim(const char *name, int64_t ld, int64_t cols) {
  int64_t minimum = cols > 1 ? cols : 1;
  if (ld < minimum || !fitsInt(ld))
    return invalid(std::string(name) + " = " + std::to_string(ld) +
                   " must be at least " + std::to_string(minimum) +
                   " and fit in an int");
  return ZSHARD_RT_OK;
}

} // namespace

extern "C" zshard_rt_status
zshard_rt_cpu_sgemm(zshard_rt_transpose transA, zshard_rt_transpose transB,
                    int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb,
                    float beta, float *c, int64_t ldc) {
  auto isTranspose = [](zshard_rt_transpose t) {
    return t == ZSHARD_RT_NO_TRANS || t == ZSHARD_RT_TRANS;
  };
  if (!isTranspose(transA) || !isTranspose(transB))
    return invalid("transA and transB must be ZSHARD_RT_NO_TRANS or "
                   "ZSHARD_RT_TRANS");
  if (!fitsInt(m) || !fitsInt(n) || !fitsInt(k))
    return invalid("m, n, k = " + std::to_string(m) + ", " + std::to_string(n) +
                   ", " + std::to_string(k) +
                   " must be non-negative and fit in an int");
  bool ta = transA == ZSHARD_RT_TRANS, tb = transB == ZSHARD_RT_TRANS;
  if (zshard_rt_status s = checkLeadingDim("lda", lda, ta ? m : k))
    return s;
  if (zshard_rt_status s = checkLeadingDim("ldb", ldb, tb ? k : n))
    return s;
  if (zshard_rt_status s = checkLeadingDim("ldc", ldc, n))
    return s;
  if (m == 0 || n == 0)
    return ZSHARD_RT_OK;
  if (!c)
    return nullArgument(entry, "c");
  if (k > 0 && (!a || !b))
    return nullArgument(entry, !a ? "a" : "b");

  // C = beta * C alone. Done here so that beta == 0 never reads C, whatever
  // the BLAS does with k == 0.
  if (k == 0 || alpha == 0.0f) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return ZSHARD_RT_OK;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
  return ZSHARD_RT_OK;
}

extern "C" const char *zshard_rt_cpu_blas_info(void) {
  return openblas_get_config();
}

extern "C" zshard_rt_status zshard_rt_cpu_set_num_threads(int threads) {
  if (threads < 1)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    "zshard_rt_cpu_set_num_threads: threads = " +
                        std::to_string(threads) + " must be at least 1");
  openblas_set_num_threads(threads);
  return ZSHARD_RT_OK;
}
