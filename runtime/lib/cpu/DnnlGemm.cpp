//===- DnnlGemm.cpp - Step products on oneDNN's matmul --------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "cpu/DnnlGemm.h"

#include "step/Fatal.h"

#include "zshard/runtime/zshard_rt.h"

#include <cblas.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

using namespace zshard::rt;

namespace {

/// A product's layout, operand type and what it adds (a bias, a matrix):
/// what a matmul primitive is made for.
struct Key {
  bool transA, transB;
  int64_t batch, m, n, k;
  int lda, ldb, ldc;
  int64_t strideA, strideB, strideC;
  bool accumulate;
  dnnl::memory::data_type operands;
  bool bias, addend;
  int64_t ldd, strideD;

  auto tie() const {
    return std::tie(transA, transB, batch, m, n, k, lda, ldb, ldc, strideA,
                    strideB, strideC, accumulate, operands, bias, addend, ldd,
                    strideD);
  }
  bool operator<(const Key &other) const { return tie() < other.tie(); }
};

/// The memory descriptor of the batch of row-major matrices `rows x cols`
/// (or their transposes, read through strides) with leading dimension `ld`
/// and batch stride `stride` (0: one matrix for the whole batch).
dnnl::memory::desc describe(dnnl::memory::data_type type, int64_t batch,
                            int64_t rows, int64_t cols, int64_t ld,
                            int64_t stride, bool transposed) {
  using dims = dnnl::memory::dims;
  int64_t batchDim = stride == 0 ? 1 : batch;
  // One matrix: the stride of its batch dimension is never used, but a
  // dense one keeps the layout plain (a 0 sends oneDNN to its reference
  // kernel, 50x slower).
  if (batchDim == 1)
    stride = (transposed ? cols : rows) * ld;
  // Element (i, r, c) of op(X) is X_i[r][c], or X_i[c][r] when transposed.
  dims strides = transposed ? dims{stride, 1, ld} : dims{stride, ld, 1};
  return dnnl::memory::desc(dims{batchDim, rows, cols}, type, strides);
}

/// A matmul primitive and what it was made from; none when oneDNN has no
/// kernel for the layout that beats the fallback (only its reference kernel
/// for bf16; anything but a batch-reduce GEMM for f32).
struct Matmul {
  dnnl::matmul::primitive_desc desc;
  std::optional<dnnl::matmul> op;
};

struct Primitives {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::mutex mutex;
  std::map<Key, Matmul> cache;

  /// The matmul for `key`'s layout and operand type: C += A B (the sum
  /// post-op), C = A B, C = A B + bias (one f32 row added to every row of
  /// every matrix) or C = A B + bias + D (a binary post-op), with an f32 C.
  Matmul get(const Key &key, const StepGemmShape &s, int64_t strideA,
             int64_t strideB, int64_t strideC) {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = cache.find(key);
    if (found != cache.end())
      return found->second;
    using type = dnnl::memory::data_type;
    type operands = key.operands;
    dnnl::memory::desc a =
        describe(operands, s.batch, s.m, s.k, s.lda, strideA, s.transA);
    dnnl::memory::desc b =
        describe(operands, s.batch, s.k, s.n, s.ldb, strideB, s.transB);
    dnnl::memory::desc c =
        describe(type::f32, s.batch, s.m, s.n, s.ldc, strideC, false);
    dnnl::primitive_attr attr;
    if (s.accumulate || key.addend) {
      dnnl::post_ops ops;
      if (s.accumulate)
        ops.append_sum(1.0f);
      if (key.addend)
        ops.append_binary(dnnl::algorithm::binary_add,
                          describe(type::f32, s.batch, s.m, s.n, key.ldd,
                                   key.strideD, false));
      attr.set_post_ops(ops);
    }
    // Scratch from the caller, per call: rank threads run one primitive at
    // once safely (ScratchPolicy).
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    bool withBias = key.bias;
    dnnl::memory::desc bias(dnnl::memory::dims{1, 1, s.n}, type::f32,
                            dnnl::memory::dims{s.n, s.n, 1});
    dnnl::matmul::primitive_desc desc(withBias
                                          ? dnnl::matmul::desc(a, b, bias, c)
                                          : dnnl::matmul::desc(a, b, c),
                                      attr, engine);
    std::string impl = desc.impl_info_str();
    bool faster = operands == type::f32 ? impl.rfind("brg", 0) == 0
                                        : impl.rfind("ref", 0) != 0;
    std::optional<dnnl::matmul> op;
    if (faster)
      op = dnnl::matmul(desc);
    return cache.emplace(key, Matmul{desc, op}).first->second;
  }
};

Primitives &primitives() {
  static Primitives instance;
  return instance;
}

} // namespace

bool zshard::rt::hasNativeBf16Gemm() {
  static const bool native = [] {
    try {
      return dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core_bf16;
    } catch (const dnnl::error &) {
      return false;
    }
  }();
  return native;
}

namespace {

/// Where a call's oneDNN scratch comes from. bf16 products charge it to
/// `other` of the current memory context for the call, like the widened
/// panels of their fallback. f32 products replace cblas_sgemm, whose working
/// buffers the memory plan does not count either, so theirs is the BLAS's
/// own: one block per thread, kept and grown to the largest call's need
/// (under 1 MiB on a transformer step's products), outside the plan.
enum class ScratchPolicy { ChargeToOther, ThreadBuffer };

/// The calling thread's f32 scratch for `entry`, at least `bytes` of it.
void *threadScratch(const char *entry, size_t bytes) {
  struct Buffer {
    void *data = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (buffer.size < bytes) {
    std::free(buffer.data);
    size_t rounded = (bytes + 63) / 64 * 64;
    buffer.data = std::aligned_alloc(64, rounded);
    if (!buffer.data)
      stepFatal(entry, "cannot allocate %zu bytes of scratch", rounded);
    buffer.size = rounded;
  }
  return buffer.data;
}

/// Runs the matmul for `s` on operands of type `operands`, adding `bias` to
/// every row and then `addend` when not null; false, having done nothing,
/// when there is none worth running (Matmul).
bool run(const char *entry, dnnl::memory::data_type operands,
         ScratchPolicy policy, const StepGemmShape &s, const void *a,
         int64_t strideA, const void *b, int64_t strideB, float *c,
         int64_t strideC, const float *bias = nullptr,
         const GemmAddend *addend = nullptr) {
  try {
    Key key{s.transA,
            s.transB,
            s.batch,
            s.m,
            s.n,
            s.k,
            s.lda,
            s.ldb,
            s.ldc,
            strideA,
            strideB,
            strideC,
            s.accumulate,
            operands,
            bias != nullptr,
            addend != nullptr,
            addend ? addend->ld : 0,
            addend ? addend->stride : 0};
    Primitives &p = primitives();
    Matmul matmul = p.get(key, s, strideA, strideB, strideC);
    if (!matmul.op)
      return false;
    const dnnl::matmul::primitive_desc &desc = matmul.desc;
    // oneDNN runs on OpenMP: as many threads as this rank gives OpenBLAS.
    omp_set_num_threads(openblas_get_num_threads());
    dnnl::stream stream(p.engine);
    dnnl::memory src(desc.src_desc(), p.engine, const_cast<void *>(a));
    dnnl::memory weights(desc.weights_desc(), p.engine, const_cast<void *>(b));
    dnnl::memory dst(desc.dst_desc(), p.engine, c);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (bias)
      args.emplace(DNNL_ARG_BIAS, dnnl::memory(desc.bias_desc(), p.engine,
                                               const_cast<float *>(bias)));
    if (addend)
      args.emplace(
          DNNL_ARG_ATTR_MULTIPLE_POST_OP(s.accumulate ? 1 : 0) | DNNL_ARG_SRC_1,
          dnnl::memory(describe(dnnl::memory::data_type::f32, s.batch, s.m, s.n,
                                addend->ld, addend->stride, false),
                       p.engine, const_cast<float *>(addend->data)));
    dnnl::memory::desc scratchDesc = desc.scratchpad_desc();
    void *scratch = nullptr;
    size_t bytes = scratchDesc.get_size();
    if (bytes && policy == ScratchPolicy::ThreadBuffer) {
      args.emplace(
          DNNL_ARG_SCRATCHPAD,
          dnnl::memory(scratchDesc, p.engine, threadScratch(entry, bytes)));
    } else if (bytes) {
      if (zshard_rt_cpu_alloc(zshard_rt_current_mem_ctx(), ZSHARD_RT_MEM_OTHER,
                              bytes, 0, &scratch) != ZSHARD_RT_OK)
        stepFatal(entry, "%s", zshard_rt_last_error_message());
      args.emplace(DNNL_ARG_SCRATCHPAD,
                   dnnl::memory(scratchDesc, p.engine, scratch));
    }
    matmul.op->execute(stream, args);
    stream.wait();
    if (scratch)
      zshard_rt_cpu_free(zshard_rt_current_mem_ctx(), scratch);
    return true;
  } catch (const dnnl::error &error) {
    stepFatal(entry, "oneDNN's matmul failed: %s", error.what());
  }
}

} // namespace

bool zshard::rt::dnnlGemmBf16(const StepGemmShape &s, const uint16_t *a,
                              int64_t strideA, const uint16_t *b,
                              int64_t strideB, float *c, int64_t strideC) {
  return run("zshard_rt_step_gemm_bf16", dnnl::memory::data_type::bf16,
             ScratchPolicy::ChargeToOther, s, a, strideA, b, strideB, c,
             strideC);
}

bool zshard::rt::dnnlSgemm(const StepGemmShape &s, const float *a,
                           int64_t strideA, const float *b, int64_t strideB,
                           float *c, int64_t strideC, const float *bias,
                           const GemmAddend *addend) {
  if (s.m * s.n * s.k < kDnnlSgemmMinMacs)
    return false;
  if (!s.transB &&
      (s.n > kDnnlSgemmMaxPlainBColumns || s.k >= kDnnlSgemmMaxPlainBDepth))
    return false;
  const char *entry = addend ? "zshard_rt_step_sgemm_bias_add"
                      : bias ? "zshard_rt_step_sgemm_bias"
                             : "zshard_rt_step_sgemm";
  return run(entry, dnnl::memory::data_type::f32, ScratchPolicy::ThreadBuffer,
             s, a, strideA, b, strideB, c, strideC, bias, addend);
}
