//===- StepGemmBf16.cpp - Batched bf16 products for compiled steps --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard_rt_step_gemm_bf16 is zshard_rt_step_sgemm with bf16 operands and an
// f32 accumulator: what a compiled linalg.matmul of bf16 inputs into an f32
// output calls. The checks and counters are zshard_rt_step_sgemm's
// (StepGemm.h).
//
// On the CPU, OpenBLAS has no bf16 product with f32 output on every machine,
// so each operand matrix is widened to f32 (exactly: a bf16 is the upper half
// of an f32) into a dense scratch panel and cblas_sgemm runs on the panels.
// The scratch is one zshard_rt_cpu_alloc block per call, charged to
// ZSHARD_RT_MEM_OTHER of the current memory context, so memory timelines see
// it. A stride of 0 (a broadcast operand) is widened once.
//
// On a CUDA current device the product goes to cuBLAS instead
// (Device::stepGemmBf16).
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

#include <chrono>
#include <cstdint>
#include <cstring>

using namespace zshard::rt;

namespace {

constexpr const char *entry = "zshard_rt_step_gemm_bf16";

float widen(uint16_t bits) {
  uint32_t word = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

/// Widens the \p rows x \p cols matrix at \p src (row stride \p ld) into the
/// dense panel \p dst.
void widenPanel(const uint16_t *src, int64_t ld, int64_t rows, int64_t cols,
                float *dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t *row = src + r * ld;
    float *out = dst + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      out[c] = widen(row[c]);
  }
}

/// The scratch panels of one call, freed on return.
class Scratch {
public:
  explicit Scratch(uint64_t elements) {
    if (zshard_rt_cpu_alloc(zshard_rt_current_mem_ctx(), ZSHARD_RT_MEM_OTHER,
                            elements * sizeof(float), 0,
                            &block) != ZSHARD_RT_OK)
      stepFatal(entry, "%s", zshard_rt_last_error_message());
  }
  ~Scratch() { zshard_rt_cpu_free(zshard_rt_current_mem_ctx(), block); }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  float *data() const { return static_cast<float *>(block); }

private:
  void *block = nullptr;
};

void gemmOnCpu(const StepGemmShape &s, const uint16_t *a, int64_t strideA,
               const uint16_t *b, int64_t strideB, float *c, int64_t strideC) {
  // The stored shapes of A and B.
  int64_t aRows = s.transA ? s.k : s.m, aCols = s.transA ? s.m : s.k;
  int64_t bRows = s.transB ? s.n : s.k, bCols = s.transB ? s.k : s.n;
  uint64_t aElems = uint64_t(aRows * aCols), bElems = uint64_t(bRows * bCols);
  Scratch scratch(aElems + bElems);
  float *panelA = scratch.data(), *panelB = scratch.data() + aElems;
  CBLAS_TRANSPOSE opA = s.transA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE opB = s.transB ? CblasTrans : CblasNoTrans;
  int im = int(s.m), in = int(s.n), ik = int(s.k);
  for (int64_t i = 0; i < s.batch; ++i) {
    if (i == 0 || strideA != 0)
      widenPanel(a + i * strideA, s.lda, aRows, aCols, panelA);
    if (i == 0 || strideB != 0)
      widenPanel(b + i * strideB, s.ldb, bRows, bCols, panelB);
    cblas_sgemm(CblasRowMajor, opA, opB, im, in, ik, 1.0f, panelA,
                int(aCols > 1 ? aCols : 1), panelB, int(bCols > 1 ? bCols : 1),
                s.beta(), c + i * strideC, s.ldc);
  }
}

/// The product on oneDNN where the CPU multiplies bf16 itself; false, with
/// nothing done, elsewhere.
bool gemmNatively(const StepGemmShape &s, const uint16_t *a, int64_t strideA,
                  const uint16_t *b, int64_t strideB, float *c,
                  int64_t strideC) {
#ifdef ZSHARD_HAS_DNNL
  return hasNativeBf16Gemm() &&
         dnnlGemmBf16(s, a, strideA, b, strideB, c, strideC);
#else
  (void)s, (void)a, (void)strideA, (void)b, (void)strideB, (void)c,
      (void)strideC;
  return false;
#endif
}

} // namespace

extern "C" void zshard_rt_step_gemm_bf16(int32_t transA, int32_t transB,
                                         int64_t batch, int64_t m, int64_t n,
                                         int64_t k, const uint16_t *a,
                                         int64_t lda, int64_t strideA,
                                         const uint16_t *b, int64_t ldb,
                                         int64_t strideB, float *c, int64_t ldc,
                                         int64_t strideC, int32_t accumulate) {
  auto start = std::chrono::steady_clock::now();
  StepGemmCounters &counters = stepGemmCounters();
  ++counters.calls;
  StepGemmShape shape = checkStepGemm(entry, transA, transB, batch, m, n, k, a,
                                      lda, b, ldb, c, ldc, accumulate);
  if (shape.empty())
    return;
  if (Device *device = currentStepDevice())
    device->stepGemmBf16(shape, a, strideA, b, strideB, c, strideC);
  else if (shape.zeroesOnly())
    zeroStepProducts(shape, c, strideC);
  else if (!gemmNatively(shape, a, strideA, b, strideB, c, strideC))
    gemmOnCpu(shape, a, strideA, b, strideB, c, strideC);
  counters.flops += 2.0 * double(batch) * double(m) * double(n) * double(k);
  counters.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
}

extern "C" int32_t zshard_rt_cpu_native_bf16_gemm(void) {
#ifdef ZSHARD_HAS_DNNL
  return hasNativeBf16Gemm() ? 1 : 0;
#else
  return 0;
#endif
}
