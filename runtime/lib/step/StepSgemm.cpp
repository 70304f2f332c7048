//===- StepSgemm.cpp - Batched accumulating sgemm for compiled steps ------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard_rt_step_sgemm is what a compiled linalg.matmul / batch_matmul calls:
// C_i += op(A_i) * op(B_i) for each matrix of a batch, or C_i = op(A_i) *
// op(B_i) where the compiler folded C's zero-fill into the product. It sits on
// the hot path of every step and is called with small shapes, so it allocates
// nothing, builds no strings unless it aborts, and checks only what would make
// the BLAS misbehave silently (OpenBLAS reports a bad leading dimension through
// xerbla and then computes nothing).
//
// Large products go to oneDNN's matmul where it has batch-reduce GEMM kernels
// for the CPU (cpu/DnnlGemm.h: 5-15% faster than OpenBLAS 0.3.21 on a
// transformer step's shapes on an AVX-512 Xeon), the rest to cblas_sgemm.
//
// The time spent and the work done are added to counters of the calling
// thread: a rank runs its step on one thread, so the launcher reads its own
// rank's figures without any synchronization. zshard_rt_step_gemm_bf16
// (StepGemmBf16.cpp) checks its arguments here and adds to the same counters.
//
// When the thread's current device is a GPU (zshard_rt_set_current_device),
// the product runs there instead (cuBLAS on the device's compute stream,
// cuda/CudaStepOps.cpp); the time counted is then the time to enqueue it.
//
//===----------------------------------------------------------------------===//

#include "device/CurrentDevice.h"
#include "device/Device.h"
#include "step/Fatal.h"
#include "step/StepGemm.h"
#ifdef ZSHARD_HAS_DNNL
#include "cpu/DnnlGemm.h"
#endif

#include "zshard/runtime/zshard_rt.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <optional>

using namespace zshard::rt;

namespace {

constexpr const char *entry = "zshard_rt_step_sgemm";

thread_local StepGemmCounters counters;

/// Returns the leading dimension to hand to the BLAS for a stored matrix of
/// \p rows x \p cols with row stride \p ld. A single row never uses its stride,
/// and compiled code may pass anything there (the stride of a unit dimension),
/// so it becomes the smallest value the BLAS accepts. Aborts on a stride that
/// would make rows overlap.
int leadingDim(const char *entry, const char *name, int64_t ld, int64_t rows,
               int64_t cols) {
  int64_t minimum = cols > 1 ? cols : 1;
  if (rows <= 1 && ld < minimum)
    ld = minimum;
  if (ld < minimum || ld > INT_MAX)
    stepFatal(entry,
              "%s = %lld for a %lld x %lld matrix (must be at least %lld "
              "and fit in an int)",
              name, static_cast<long long>(ld), static_cast<long long>(rows),
              static_cast<long long>(cols), static_cast<long long>(minimum));
  return static_cast<int>(ld);
}

/// The product (plus `bias` on every row, then `addend`, when not null) on
/// oneDNN where it beats OpenBLAS (cpu/DnnlGemm.h); false, with nothing
/// done, elsewhere.
bool gemmOnDnnl(const StepGemmShape &s, const float *a, int64_t strideA,
                const float *b, int64_t strideB, float *c, int64_t strideC,
                const float *bias = nullptr,
                const GemmAddend *addend = nullptr) {
#ifdef ZSHARD_HAS_DNNL
  return dnnlSgemm(s, a, strideA, b, strideB, c, strideC, bias, addend);
#else
  (void)s, (void)a, (void)strideA, (void)b, (void)strideB, (void)c,
      (void)strideC, (void)bias, (void)addend;
  return false;
#endif
}

/// C_i = op(A_i) op(B_i) for each matrix on OpenBLAS.
void gemmOnBlas(const StepGemmShape &shape, const float *a, int64_t strideA,
                const float *b, int64_t strideB, float *c, int64_t strideC) {
  CBLAS_TRANSPOSE opA = shape.transA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE opB = shape.transB ? CblasTrans : CblasNoTrans;
  int im = static_cast<int>(shape.m), in = static_cast<int>(shape.n),
      ik = static_cast<int>(shape.k);
  for (int64_t i = 0; i < shape.batch; ++i)
    cblas_sgemm(CblasRowMajor, opA, opB, im, in, ik, 1.0f, a + i * strideA,
                shape.lda, b + i * strideB, shape.ldb, shape.beta(),
                c + i * strideC, shape.ldc);
}

} // namespace

StepGemmCounters &zshard::rt::stepGemmCounters() { return counters; }

StepGemmShape zshard::rt::checkStepGemm(
    const char *entry, int32_t transA, int32_t transB, int64_t batch, int64_t m,
    int64_t n, int64_t k, const void *a, int64_t lda, const void *b,
    int64_t ldb, const void *c, int64_t ldc, int32_t accumulate) {
  if (batch < 0 || m < 0 || n < 0 || k < 0 || m > INT_MAX || n > INT_MAX ||
      k > INT_MAX)
    stepFatal(entry,
              "batch, m, n, k = %lld, %lld, %lld, %lld must be non-negative "
              "and m, n, k fit in an int",
              static_cast<long long>(batch), static_cast<long long>(m),
              static_cast<long long>(n), static_cast<long long>(k));
  StepGemmShape shape{transA != 0, transB != 0, batch, m, n,
                      k,           1,           1,     1, accumulate != 0};
  // C += (empty product) leaves C as it is.
  if (shape.empty())
    return shape;
  if (!c)
    stepFatal(entry, "c is NULL");
  shape.ldc = leadingDim(entry, "ldc", ldc, m, n);
  // C = (empty product) zeroes C and reads neither A nor B.
  if (shape.zeroesOnly())
    return shape;
  if (!a || !b)
    stepFatal(entry, "%s is NULL", !a ? "a" : "b");
  bool ta = shape.transA, tb = shape.transB;
  shape.lda = leadingDim(entry, "lda", lda, ta ? k : m, ta ? m : k);
  shape.ldb = leadingDim(entry, "ldb", ldb, tb ? n : k, tb ? k : n);
  return shape;
}

void zshard::rt::zeroStepProducts(const StepGemmShape &shape, float *c,
                                  int64_t strideC) {
  for (int64_t i = 0; i < shape.batch; ++i)
    for (int64_t row = 0; row < shape.m; ++row)
      std::fill_n(c + i * strideC + row * shape.ldc, shape.n, 0.0f);
}

extern "C" void zshard_rt_step_sgemm(int32_t transA, int32_t transB,
                                     int64_t batch, int64_t m, int64_t n,
                                     int64_t k, const float *a, int64_t lda,
                                     int64_t strideA, const float *b,
                                     int64_t ldb, int64_t strideB, float *c,
                                     int64_t ldc, int64_t strideC,
                                     int32_t accumulate) {
  auto start = std::chrono::steady_clock::now();
  ++counters.calls;
  StepGemmShape shape = checkStepGemm(entry, transA, transB, batch, m, n, k, a,
                                      lda, b, ldb, c, ldc, accumulate);
  if (shape.empty())
    return;

  if (Device *device = currentStepDevice()) {
    device->stepSgemm(shape, a, strideA, b, strideB, c, strideC);
  } else if (shape.zeroesOnly()) {
    zeroStepProducts(shape, c, strideC);
  } else if (gemmOnDnnl(shape, a, strideA, b, strideB, c, strideC)) {
    ++counters.dnnlCalls;
  } else {
    gemmOnBlas(shape, a, strideA, b, strideB, c, strideC);
  }

  counters.flops += 2.0 * double(batch) * double(m) * double(n) * double(k);
  counters.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
}

namespace {

/// The elements past the first of the batch of m x n matrices `ld` and
/// `stride` apart: [first, first + span) holds them all.
int64_t matricesSpan(const StepGemmShape &s, int64_t ld, int64_t stride) {
  return (s.batch - 1) * stride + (s.m - 1) * ld + s.n;
}

/// zshard_rt_step_sgemm_bias() and zshard_rt_step_sgemm_bias_add(): C =
/// A B + bias, then + D when `addend` is not null.
void biasProduct(const char *entry, int32_t transA, int32_t transB,
                 int64_t batch, int64_t m, int64_t n, int64_t k, const float *a,
                 int64_t lda, int64_t strideA, const float *b, int64_t ldb,
                 int64_t strideB, float *c, int64_t ldc, int64_t strideC,
                 const float *bias, const GemmAddend *addend) {
  auto start = std::chrono::steady_clock::now();
  ++counters.calls;
  StepGemmShape shape = checkStepGemm(entry, transA, transB, batch, m, n, k, a,
                                      lda, b, ldb, c, ldc, 0);
  if (shape.empty())
    return;
  if (!bias)
    stepFatal(entry, "bias is NULL");
  // D with its leading dimension as the checks take it.
  std::optional<GemmAddend> checked;
  if (addend) {
    if (!addend->data)
      stepFatal(entry, "d is NULL");
    checked =
        GemmAddend{addend->data, leadingDim(entry, "ldd", addend->ld, m, n),
                   addend->stride};
    const float *cEnd = c + matricesSpan(shape, shape.ldc, strideC);
    const float *dEnd =
        checked->data + matricesSpan(shape, checked->ld, checked->stride);
    if (checked->data < cEnd && c < dEnd)
      stepFatal(entry, "d overlaps c");
    addend = &*checked;
  }
  if (Device *device = currentStepDevice())
    stepFatal(entry,
              "%s: products with a bias run on the host only (the CPU "
              "target's artifacts call them)",
              device->name().c_str());
  if (!gemmOnDnnl(shape, a, strideA, b, strideB, c, strideC, bias, addend)) {
    // The product, then the bias and D added to it: the sums oneDNN's
    // epilogue computes.
    if (shape.zeroesOnly())
      zeroStepProducts(shape, c, strideC);
    else
      gemmOnBlas(shape, a, strideA, b, strideB, c, strideC);
    for (int64_t i = 0; i < shape.batch; ++i)
      for (int64_t row = 0; row < shape.m; ++row) {
        float *out = c + i * strideC + row * shape.ldc;
        for (int64_t col = 0; col < shape.n; ++col)
          out[col] += bias[col];
        if (!addend)
          continue;
        const float *d = addend->data + i * addend->stride + row * addend->ld;
        for (int64_t col = 0; col < shape.n; ++col)
          out[col] += d[col];
      }
  } else {
    ++counters.dnnlCalls;
  }
  counters.flops += 2.0 * double(batch) * double(m) * double(n) * double(k);
  counters.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
}

} // namespace

extern "C" void
zshard_rt_step_sgemm_bias(int32_t transA, int32_t transB, int64_t batch,
                          int64_t m, int64_t n, int64_t k, const float *a,
                          int64_t lda, int64_t strideA, const float *b,
                          int64_t ldb, int64_t strideB, float *c, int64_t ldc,
                          int64_t strideC, const float *bias) {
  biasProduct("zshard_rt_step_sgemm_bias", transA, transB, batch, m, n, k, a,
              lda, strideA, b, ldb, strideB, c, ldc, strideC, bias, nullptr);
}

extern "C" void zshard_rt_step_sgemm_bias_add(
    int32_t transA, int32_t transB, int64_t batch, int64_t m, int64_t n,
    int64_t k, const float *a, int64_t lda, int64_t strideA, const float *b,
    int64_t ldb, int64_t strideB, float *c, int64_t ldc, int64_t strideC,
    const float *bias, const float *d, int64_t ldd, int64_t strideD) {
  GemmAddend addend{d, ldd, strideD};
  biasProduct("zshard_rt_step_sgemm_bias_add", transA, transB, batch, m, n, k,
              a, lda, strideA, b, ldb, strideB, c, ldc, strideC, bias, &addend);
}

extern "C" double zshard_rt_step_sgemm_seconds(void) {
  return counters.seconds;
}

extern "C" double zshard_rt_step_sgemm_flops(void) { return counters.flops; }

extern "C" uint64_t zshard_rt_step_sgemm_calls(void) { return counters.calls; }

extern "C" uint64_t zshard_rt_step_sgemm_dnnl_calls(void) {
  return counters.dnnlCalls;
}

extern "C" void zshard_rt_step_sgemm_reset_counters(void) {
  counters = StepGemmCounters{};
}
