//===- zshard_rt.h - zshard runtime C ABI -------------------------*- C -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The C ABI of the zshard runtime: the only interface that compiled training
/// steps, the launcher and tools call. It is plain C (C99 and later, and C++
/// through `extern "C"`), uses fixed-width integer types, and never exposes a
/// C++ type. Every entry exists in every build; an entry whose backend was not
/// built (CUDA, NCCL, MPI) returns ZSHARD_RT_ERROR_UNAVAILABLE and says why in
/// zshard_rt_last_error_message().
///
/// Conventions:
///  - Fallible entries return a zshard_rt_status. On failure they store a
///    message for the calling thread (see zshard_rt_last_error_message()) and
///    leave their output arguments as documented (zeroed where stated).
///  - Byte counts are uint64_t; matrix dimensions are int64_t.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_ZSHARD_RT_H
#define ZSHARD_RUNTIME_ZSHARD_RT_H

#include <stddef.h>
#include <stdint.h>

#include "zshard/abi/RuntimeCodes.h"

#if defined(_WIN32)
#define ZSHARD_RT_API
#else
#define ZSHARD_RT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Version
//===----------------------------------------------------------------------===//

/// Version of this header. The build reads these three lines as the version
/// of the runtime project, so they are the single source of truth.
#define ZSHARD_RT_VERSION_MAJOR 0
#define ZSHARD_RT_VERSION_MINOR 1
#define ZSHARD_RT_VERSION_PATCH 0

/// Writes the version the runtime library was built with. Any argument may be
/// NULL. Compare with the ZSHARD_RT_VERSION_* macros to detect a header and
/// library mismatch.
ZSHARD_RT_API void zshard_rt_version(int *major, int *minor, int *patch);

/// Returns the library version as "MAJOR.MINOR.PATCH" (static storage).
ZSHARD_RT_API const char *zshard_rt_version_string(void);

/// Bits of zshard_rt_build_features().
typedef enum zshard_rt_feature {
  ZSHARD_RT_FEATURE_CUDA = 1u << 0, ///< Built with the CUDA device.
  ZSHARD_RT_FEATURE_NCCL = 1u << 1, ///< Built with NCCL (implies CUDA).
  ZSHARD_RT_FEATURE_MPI = 1u << 2   ///< Built with the MPI backend.
} zshard_rt_feature;

/// Returns the backends this library was built with, as zshard_rt_feature
/// bits. Being built with CUDA says nothing about a device being present; use
/// zshard_rt_cuda_device_count() for that.
ZSHARD_RT_API uint32_t zshard_rt_build_features(void);

//===----------------------------------------------------------------------===//
// Status and errors
//===----------------------------------------------------------------------===//

/// Result of every fallible runtime entry.
typedef enum zshard_rt_status {
  ZSHARD_RT_OK = 0,                     ///< Success.
  ZSHARD_RT_ERROR_INVALID_ARGUMENT = 1, ///< A NULL or out-of-range argument.
  ZSHARD_RT_ERROR_OUT_OF_MEMORY = 2,    ///< An allocation failed.
  ZSHARD_RT_ERROR_ACCOUNTING = 3,       ///< Memory accounting would go wrong,
                                        ///< e.g. freeing more than is live.
  ZSHARD_RT_ERROR_UNAVAILABLE = 4,      ///< Backend not built, or no driver or
                                        ///< device present.
  ZSHARD_RT_ERROR_DEVICE = 5,           ///< A device (CUDA) call failed.
  ZSHARD_RT_ERROR_COMMUNICATION = 6,    ///< A communication call failed.
  ZSHARD_RT_ERROR_INTERNAL = 7          ///< A self-check of the runtime failed.
} zshard_rt_status;

/// Returns a constant name for \p status, e.g. "ZSHARD_RT_ERROR_UNAVAILABLE";
/// "unknown status" for values outside the enum.
ZSHARD_RT_API const char *zshard_rt_status_string(zshard_rt_status status);

/// Returns the message of the last failing runtime call on the calling thread,
/// or "" when none failed since the thread started or since
/// zshard_rt_clear_last_error(). Successful calls leave it unchanged. The
/// pointer stays valid until the next runtime call on this thread.
ZSHARD_RT_API const char *zshard_rt_last_error_message(void);

/// Clears the calling thread's last error message.
ZSHARD_RT_API void zshard_rt_clear_last_error(void);

//===----------------------------------------------------------------------===//
// Memory accounting
//===----------------------------------------------------------------------===//

/// zshard_rt_mem_category (what a block of memory holds) is in
/// zshard/abi/RuntimeCodes.h, with the other codes compiled steps pass.

/// Returns a constant lower-case name for \p category ("parameters",
/// "gradients", "optimizer_state", "activations", "communication", "other",
/// "host_offload"),
/// or NULL when \p category is not a category.
ZSHARD_RT_API const char *
zshard_rt_mem_category_name(zshard_rt_mem_category category);

/// An accounting context: live and peak bytes per category and the peak of
/// their sum. One per rank. All operations on one context are thread-safe and
/// exact under concurrency (a rank may allocate from several threads);
/// different contexts are independent.
typedef struct zshard_rt_mem_ctx zshard_rt_mem_ctx;

/// Creates an empty context in \p *out (set to NULL on failure).
ZSHARD_RT_API zshard_rt_status
zshard_rt_mem_ctx_create(zshard_rt_mem_ctx **out);

/// Destroys \p ctx (NULL is ignored). Live bytes left over are not an error
/// here; query them first when a leak matters.
ZSHARD_RT_API void zshard_rt_mem_ctx_destroy(zshard_rt_mem_ctx *ctx);

/// Records \p bytes allocated in \p category. Fails with
/// ZSHARD_RT_ERROR_ACCOUNTING, recording nothing, if a counter would overflow.
ZSHARD_RT_API zshard_rt_status zshard_rt_mem_record_alloc(
    zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category, uint64_t bytes);

/// Records \p bytes freed from \p category. Freeing more than is live in that
/// category fails with ZSHARD_RT_ERROR_ACCOUNTING and records nothing.
ZSHARD_RT_API zshard_rt_status zshard_rt_mem_record_free(
    zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category, uint64_t bytes);

/// Writes the bytes currently live in \p category to \p *out.
ZSHARD_RT_API zshard_rt_status
zshard_rt_mem_live_bytes(const zshard_rt_mem_ctx *ctx,
                         zshard_rt_mem_category category, uint64_t *out);

/// Writes the highest live byte count \p category has reached to \p *out.
ZSHARD_RT_API zshard_rt_status
zshard_rt_mem_peak_bytes(const zshard_rt_mem_ctx *ctx,
                         zshard_rt_mem_category category, uint64_t *out);

/// Writes the bytes live over all device categories (every category but
/// ZSHARD_RT_MEM_HOST_OFFLOAD) to \p *out.
ZSHARD_RT_API zshard_rt_status
zshard_rt_mem_total_live_bytes(const zshard_rt_mem_ctx *ctx, uint64_t *out);

/// Writes the highest total live byte count to \p *out. This is the peak of
/// the sum, which is at most (and usually less than) the sum of the
/// per-category peaks.
ZSHARD_RT_API zshard_rt_status
zshard_rt_mem_total_peak_bytes(const zshard_rt_mem_ctx *ctx, uint64_t *out);

/// Sets every peak (per category and total) to the current live value, e.g.
/// at the start of a step to measure that step alone.
ZSHARD_RT_API zshard_rt_status
zshard_rt_mem_reset_peaks(zshard_rt_mem_ctx *ctx);

/// Starts recording the memory timeline of \p ctx, dropping a previous one:
/// from now on every zshard_rt_mem_record_alloc() and _free() on \p ctx (from
/// any thread, including zshard_rt_cpu_alloc() and the MLIR hooks) appends
/// one entry with the time (zshard_rt_clock_seconds()) and the live bytes of
/// every category after it. The first entry is the state at the start. While
/// no timeline is recording, accounting does no more than before.
ZSHARD_RT_API zshard_rt_status
zshard_rt_mem_timeline_start(zshard_rt_mem_ctx *ctx);

/// Stops recording; the entries stay until the next start or destroy.
ZSHARD_RT_API zshard_rt_status
zshard_rt_mem_timeline_stop(zshard_rt_mem_ctx *ctx);

/// Writes the number of timeline entries of \p ctx to \p *out.
ZSHARD_RT_API zshard_rt_status
zshard_rt_mem_timeline_size(const zshard_rt_mem_ctx *ctx, uint64_t *out);

/// Writes timeline entry \p index (below zshard_rt_mem_timeline_size()):
/// its time to \p *seconds and the live bytes of each category to
/// \p live[0 .. ZSHARD_RT_MEM_NUM_CATEGORIES - 1], indexed by category.
ZSHARD_RT_API zshard_rt_status
zshard_rt_mem_timeline_entry(const zshard_rt_mem_ctx *ctx, uint64_t index,
                             double *seconds, uint64_t *live);

//===----------------------------------------------------------------------===//
// CPU device
//===----------------------------------------------------------------------===//

/// Alignment used by zshard_rt_cpu_alloc() when asked for 0: a cache line,
/// also enough for any SIMD load.
#define ZSHARD_RT_CPU_DEFAULT_ALIGNMENT 64

/// Allocates \p bytes of host memory aligned to \p alignment (a power of two
/// up to 2 MiB, or 0 for ZSHARD_RT_CPU_DEFAULT_ALIGNMENT) and records \p bytes
/// in \p category of \p ctx. Writes the block to \p *out (NULL on failure).
/// A zero-byte request returns a distinct, freeable block and records 0
/// bytes. Only the bytes asked for are recorded, not the runtime's overhead.
ZSHARD_RT_API zshard_rt_status
zshard_rt_cpu_alloc(zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category,
                    uint64_t bytes, uint64_t alignment, void **out);

/// Frees a block from zshard_rt_cpu_alloc() and records its bytes freed in
/// the category it was allocated in; only the pointer is needed. NULL is a
/// no-op. A block of another context is rejected with
/// ZSHARD_RT_ERROR_INVALID_ARGUMENT; on any error nothing is freed. Passing
/// anything but a live block is undefined, as for free(); a header check
/// catches many such mistakes and reports them as invalid arguments.
ZSHARD_RT_API zshard_rt_status zshard_rt_cpu_free(zshard_rt_mem_ctx *ctx,
                                                  void *ptr);

/// zshard_rt_transpose (ZSHARD_RT_NO_TRANS, ZSHARD_RT_TRANS) is in
/// zshard/abi/RuntimeCodes.h.

/// Row-major single-precision matrix product on the CPU:
/// C = alpha * op(A) * op(B) + beta * C, where op(A) is m x k, op(B) is k x n
/// and C is m x n. A is stored m x k (k x m when transposed) with row stride
/// \p lda >= its column count; likewise B with \p ldb, and C with \p ldc >= n.
/// When beta is 0, C is not read. Dimensions must fit in a 32-bit int.
/// Backed by the BLAS named by zshard_rt_cpu_blas_info().
ZSHARD_RT_API zshard_rt_status zshard_rt_cpu_sgemm(
    zshard_rt_transpose transA, zshard_rt_transpose transB, int64_t m,
    int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
    const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/// Returns a description of the BLAS library in use, e.g.
/// "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Haswell MAX_THREADS=64" (static storage).
ZSHARD_RT_API const char *zshard_rt_cpu_blas_info(void);

/// 1 when zshard_rt_step_gemm_bf16() multiplies bf16 natively on this CPU
/// (a runtime built with oneDNN, on a CPU with AVX512-BF16 or AMX), 0 when
/// it widens its operands to f32 for the BLAS's sgemm.
ZSHARD_RT_API int32_t zshard_rt_cpu_native_bf16_gemm(void);

/// Sets the number of threads the BLAS uses for every later matrix product of
/// the process (openblas_set_num_threads). \p threads must be at least 1.
ZSHARD_RT_API zshard_rt_status zshard_rt_cpu_set_num_threads(int threads);

//===----------------------------------------------------------------------===//
// Compiled steps
//===----------------------------------------------------------------------===//
//
// The entries below are what a compiled step (step.so of an artifact, see
// docs/runtime.md) calls. The step leaves them undefined and they resolve to
// this library, which the launcher has already loaded. They cannot fail
// softly: a compiled step has no way to handle an error, so a broken request
// (an impossible allocation, a bad matrix description, freeing a foreign
// pointer) prints one line naming the entry to stderr and aborts.
//

/// Sets the calling thread's current memory context: the context the MLIR
/// allocation hooks below charge (category ZSHARD_RT_MEM_ACTIVATIONS). NULL
/// selects the process-wide default context again.
ZSHARD_RT_API void zshard_rt_set_current_mem_ctx(zshard_rt_mem_ctx *ctx);

/// Sets the category the calling thread's next allocations through the MLIR
/// hooks below are charged to (default ZSHARD_RT_MEM_ACTIVATIONS). Compiled
/// steps call it before each allocation; see zshard-tag-allocations.
ZSHARD_RT_API void zshard_rt_step_set_alloc_category(int32_t category);

/// Returns the calling thread's current memory context: the one set with
/// zshard_rt_set_current_mem_ctx(), else zshard_rt_default_mem_ctx().
ZSHARD_RT_API zshard_rt_mem_ctx *zshard_rt_current_mem_ctx(void);

/// Returns the process-wide default memory context, created on first use and
/// never destroyed.
ZSHARD_RT_API zshard_rt_mem_ctx *zshard_rt_default_mem_ctx(void);

/// Batched row-major single-precision product that accumulates, as a linalg
/// matmul does into its output: for i in [0, batch),
/// C_i += op(A_i) * op(B_i), with A_i = a + i * strideA (in elements), B_i and
/// C_i likewise; with \p accumulate 0, C_i = op(A_i) * op(B_i) instead
/// (BLAS's beta 0: C_i's old contents are never read; what the compiler
/// calls when it folds C's zero-fill into the product). op(A_i) is m x k:
/// A_i is stored m x k (k x m when \p transA is nonzero) with row stride
/// \p lda; op(B_i) is k x n with \p ldb; C_i is m x n with \p ldc. Empty
/// products (batch, m or n of 0, or k of 0 when accumulating) leave C
/// unchanged; k of 0 without accumulating zeroes C. Runs on the calling
/// thread: on oneDNN's matmul where oneDNN has batch-reduce GEMM kernels for
/// the CPU (AVX-512 and above) and a matrix takes at least 2^21
/// multiply-adds, else on cblas_sgemm. The time spent, the floating-point
/// operations (2*m*n*k per matrix) and the calls are added to the calling
/// thread's counters.
ZSHARD_RT_API void zshard_rt_step_sgemm(int32_t transA, int32_t transB,
                                        int64_t batch, int64_t m, int64_t n,
                                        int64_t k, const float *a, int64_t lda,
                                        int64_t strideA, const float *b,
                                        int64_t ldb, int64_t strideB, float *c,
                                        int64_t ldc, int64_t strideC,
                                        int32_t accumulate);

/// zshard_rt_step_sgemm() overwriting C with the product plus \p bias, n
/// floats added to every row of every C_i: C_i = op(A_i) * op(B_i) + bias,
/// what a compiled linear layer calls where the CPU target folded its bias
/// add into the product (zshard-matmul-to-runtime). On oneDNN the bias is
/// added in the product's epilogue, elsewhere right after it; either way
/// each element is the product's sum plus the bias, rounded once, as the
/// separate add computed it. Host only: with a GPU current device it aborts.
/// Counted like zshard_rt_step_sgemm().
ZSHARD_RT_API void
zshard_rt_step_sgemm_bias(int32_t transA, int32_t transB, int64_t batch,
                          int64_t m, int64_t n, int64_t k, const float *a,
                          int64_t lda, int64_t strideA, const float *b,
                          int64_t ldb, int64_t strideB, float *c, int64_t ldc,
                          int64_t strideC, const float *bias);

/// zshard_rt_step_sgemm_bias() plus \p d: C_i = op(A_i) * op(B_i) + bias +
/// D_i, D_i the m x n matrix at d + i * strideD (in elements) with row
/// stride \p ldd, which must not overlap C. What a compiled linear layer
/// calls where the CPU target also folded the residual add that reads its
/// output (zshard-matmul-to-runtime): each element is the product's sum
/// plus the bias, rounded, plus D's element, rounded, as the two adds
/// computed it. On oneDNN, D is added in the product's epilogue (a binary
/// post-op). Host only, counted like zshard_rt_step_sgemm().
ZSHARD_RT_API void zshard_rt_step_sgemm_bias_add(
    int32_t transA, int32_t transB, int64_t batch, int64_t m, int64_t n,
    int64_t k, const float *a, int64_t lda, int64_t strideA, const float *b,
    int64_t ldb, int64_t strideB, float *c, int64_t ldc, int64_t strideC,
    const float *bias, const float *d, int64_t ldd, int64_t strideD);

/// Causal softmax attention (zshard.causal_attention): q, out
/// [batch, heads, seq, headDim], k, v [batch, kvHeads, seq, headDim] (head h
/// reads kv head h / (heads / kvHeads)), lse [batch, heads, seq], all f32,
/// contiguous. out[t] = sum_{u <= t} softmax_u(scale q[t] . k[u]) v[u] and
/// lse[t] = log sum_{u <= t} exp(scale q[t] . k[u]). Runs in tiles with an
/// online softmax (no seq x seq buffer) on the host, or on the current CUDA
/// device's compute stream (zshard_rt_set_current_device()).
ZSHARD_RT_API void zshard_rt_step_attention_fwd(int64_t batch, int64_t heads,
                                                int64_t kvHeads, int64_t seq,
                                                int64_t headDim, float scale,
                                                const float *q, const float *k,
                                                const float *v, float *out,
                                                float *lse);

/// The backward of zshard_rt_step_attention_fwd(): from its operands, out,
/// lse and dout (out's gradient), writes dq (q's shape) and dk, dv (k's
/// shape; each kv head's gradient sums over its heads). Scores are
/// recomputed tile by tile.
ZSHARD_RT_API void zshard_rt_step_attention_bwd(
    int64_t batch, int64_t heads, int64_t kvHeads, int64_t seq, int64_t headDim,
    float scale, const float *q, const float *k, const float *v,
    const float *out, const float *lse, const float *dout, float *dq, float *dk,
    float *dv);

/// zshard_rt_step_attention_fwd() on operands with strides: element
/// (b, h, t, e) of q is q[b * qBatch + h * qHead + t * qSeq + e] (each head's
/// rows of headDim contiguous), likewise k, v and out; lse is contiguous.
/// What compiled steps call: q, k and v read in place from the
/// [batch, seq, heads, headDim] projection they were split from, out
/// written in the layout its consumer reads, without the copies that would
/// make them contiguous. No stride may be negative; out must not overlap
/// itself or an input.
ZSHARD_RT_API void zshard_rt_step_attention_strided_fwd(
    int64_t batch, int64_t heads, int64_t kvHeads, int64_t seq, int64_t headDim,
    float scale, const float *q, int64_t qBatch, int64_t qHead, int64_t qSeq,
    const float *k, int64_t kBatch, int64_t kHead, int64_t kSeq, const float *v,
    int64_t vBatch, int64_t vHead, int64_t vSeq, float *out, int64_t outBatch,
    int64_t outHead, int64_t outSeq, float *lse);

/// zshard_rt_step_attention_bwd() on operands with strides, as
/// zshard_rt_step_attention_strided_fwd() (lse contiguous); dq, dk and dv
/// must not overlap each other or an input.
ZSHARD_RT_API void zshard_rt_step_attention_strided_bwd(
    int64_t batch, int64_t heads, int64_t kvHeads, int64_t seq, int64_t headDim,
    float scale, const float *q, int64_t qBatch, int64_t qHead, int64_t qSeq,
    const float *k, int64_t kBatch, int64_t kHead, int64_t kSeq, const float *v,
    int64_t vBatch, int64_t vHead, int64_t vSeq, const float *out,
    int64_t outBatch, int64_t outHead, int64_t outSeq, const float *lse,
    const float *dout, int64_t doutBatch, int64_t doutHead, int64_t doutSeq,
    float *dq, int64_t dqBatch, int64_t dqHead, int64_t dqSeq, float *dk,
    int64_t dkBatch, int64_t dkHead, int64_t dkSeq, float *dv, int64_t dvBatch,
    int64_t dvHead, int64_t dvSeq);

/// Seconds the calling thread has spent in zshard_rt_step_sgemm() since it
/// started or since zshard_rt_step_sgemm_reset_counters().
ZSHARD_RT_API double zshard_rt_step_sgemm_seconds(void);

/// Floating-point operations of the calling thread's zshard_rt_step_sgemm()
/// calls (2*m*n*k per matrix), counted like zshard_rt_step_sgemm_seconds().
ZSHARD_RT_API double zshard_rt_step_sgemm_flops(void);

/// Number of the calling thread's zshard_rt_step_sgemm() calls, counted like
/// zshard_rt_step_sgemm_seconds().
ZSHARD_RT_API uint64_t zshard_rt_step_sgemm_calls(void);

/// Number of the calling thread's zshard_rt_step_sgemm() calls that oneDNN
/// ran (the rest went to cblas_sgemm), counted like
/// zshard_rt_step_sgemm_seconds().
ZSHARD_RT_API uint64_t zshard_rt_step_sgemm_dnnl_calls(void);

/// Sets the calling thread's sgemm counters to zero.
ZSHARD_RT_API void zshard_rt_step_sgemm_reset_counters(void);

/// As zshard_rt_step_sgemm(), with bf16 operands and an f32 accumulator:
/// for i in [0, batch), C_i += op(A_i) * op(B_i) (C_i = ... with
/// \p accumulate 0), where \p a and \p b hold
/// bf16 bit patterns (the upper 16 bits of an IEEE binary32) and \p c is f32.
/// Strides and leading dimensions count elements of each operand's own type.
/// Products accumulate in f32. On the CPU each A_i and B_i is widened to f32
/// (exactly) in scratch memory charged to ZSHARD_RT_MEM_OTHER of the current
/// memory context for the call, then cblas_sgemm runs; on a CUDA current
/// device (zshard_rt_set_current_device()) cublasGemmStridedBatchedEx runs
/// with CUDA_R_16BF inputs, a CUDA_R_32F output and CUBLAS_COMPUTE_32F on the
/// device's compute stream. Counted in the zshard_rt_step_sgemm_* counters.
ZSHARD_RT_API void
zshard_rt_step_gemm_bf16(int32_t transA, int32_t transB, int64_t batch,
                         int64_t m, int64_t n, int64_t k, const uint16_t *a,
                         int64_t lda, int64_t strideA, const uint16_t *b,
                         int64_t ldb, int64_t strideB, float *c, int64_t ldc,
                         int64_t strideC, int32_t accumulate);

/// MLIR's generic allocation hooks (finalize-memref-to-llvm with
/// use-generic-functions): 64-byte aligned host memory charged to the
/// calling thread's current category (zshard_rt_step_set_alloc_category(),
/// default ZSHARD_RT_MEM_ACTIVATIONS) of its current memory context.
/// A zero-byte request returns a distinct, freeable block.
ZSHARD_RT_API void *_mlir_memref_to_llvm_alloc(size_t size);

/// As _mlir_memref_to_llvm_alloc(), aligned to \p alignment (rounded up to a
/// power of two, at least 64, at most 2 MiB).
ZSHARD_RT_API void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                       size_t size);

/// Frees a block of either hook (NULL is a no-op), crediting the context it
/// was charged to, whichever context is current now.
ZSHARD_RT_API void _mlir_memref_to_llvm_free(void *ptr);

//===----------------------------------------------------------------------===//
// CUDA device
//===----------------------------------------------------------------------===//

/// Writes the number of usable CUDA devices to \p *count. When the runtime was
/// built without CUDA, or no driver or no device is present, writes 0 and
/// returns ZSHARD_RT_ERROR_UNAVAILABLE with the reason as the message. Other
/// CUDA failures return ZSHARD_RT_ERROR_DEVICE.
ZSHARD_RT_API zshard_rt_status zshard_rt_cuda_device_count(int *count);

/// Runs the runtime's own kernels on \p device over \p n elements (fill, then
/// y = a*x + y) with device memory, copies the result back and checks every
/// element on the host. ZSHARD_RT_ERROR_INTERNAL means a wrong result;
/// ZSHARD_RT_ERROR_UNAVAILABLE as for zshard_rt_cuda_device_count().
ZSHARD_RT_API zshard_rt_status zshard_rt_cuda_self_test(int device, int64_t n);

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//
//
// A device holds a rank's step buffers (zshard-run allocates every argument
// and result there) and, while it is a thread's current device, serves the
// compiled step's allocations (the MLIR hooks) and products
// (zshard_rt_step_sgemm, zshard_rt_step_gemm_bf16). The CPU device is host
// memory; the CUDA device has a caching device memory pool over cudaMalloc
// (never managed memory), pinned and mapped host memory for offloaded state,
// a compute stream and a communication stream. Every allocation is charged to
// a memory context: device placement to the category asked for, host
// placement to ZSHARD_RT_MEM_HOST_OFFLOAD. See docs/runtime.md, "Devices".
//

/// What a device is.
typedef enum zshard_rt_device_kind {
  ZSHARD_RT_DEVICE_CPU = 0,
  ZSHARD_RT_DEVICE_CUDA = 1
} zshard_rt_device_kind;

/// Where a buffer of a device lives.
typedef enum zshard_rt_placement {
  /// The device's own memory (host memory for the CPU device).
  ZSHARD_RT_PLACEMENT_DEVICE = 0,
  /// Host memory the device can use directly: pinned and mapped on CUDA
  /// (kernels read and write it through the same pointer), plain host memory
  /// on the CPU. Charged to ZSHARD_RT_MEM_HOST_OFFLOAD.
  ZSHARD_RT_PLACEMENT_HOST = 1
} zshard_rt_placement;

/// One rank's device.
typedef struct zshard_rt_device zshard_rt_device;

/// Creates a device of \p kind in \p *out (NULL on failure). A CUDA device
/// is chosen by the local rank: the environment variable ZSHARD_LOCAL_RANK,
/// else OMPI_COMM_WORLD_LOCAL_RANK, else \p rank modulo the device count; a
/// local rank at or above the device count is an error. Without a usable GPU
/// (no driver, no device, a build without CUDA) it fails with
/// ZSHARD_RT_ERROR_UNAVAILABLE and says why; a driver older than the CUDA
/// runtime the library was built with is named with both versions. The CPU
/// device ignores \p rank.
ZSHARD_RT_API zshard_rt_status zshard_rt_device_create(
    zshard_rt_device_kind kind, int32_t rank, zshard_rt_device **out);

/// Destroys \p device (NULL is ignored) after waiting for its work. Its
/// blocks must have been freed; cached device memory goes back to the driver.
/// No thread may have it current.
ZSHARD_RT_API void zshard_rt_device_destroy(zshard_rt_device *device);

/// The kind of \p device.
ZSHARD_RT_API zshard_rt_device_kind
zshard_rt_device_get_kind(const zshard_rt_device *device);

/// "cpu", or "cuda:<ordinal> (<product name>)" (valid while \p device lives).
ZSHARD_RT_API const char *zshard_rt_device_name(const zshard_rt_device *device);

/// Allocates \p bytes at \p placement on \p device, charged to \p ctx (see
/// above), in \p *out (NULL on failure; a zero-byte request gives a distinct,
/// freeable block). Aligned to at least 64 bytes (256 on CUDA). Contents are
/// undefined. Out of memory is ZSHARD_RT_ERROR_OUT_OF_MEMORY with the bytes
/// and the category in the message.
ZSHARD_RT_API zshard_rt_status
zshard_rt_device_alloc(zshard_rt_device *device, zshard_rt_mem_ctx *ctx,
                       zshard_rt_mem_category category, uint64_t bytes,
                       zshard_rt_placement placement, void **out);

/// Frees a block of zshard_rt_device_alloc() (NULL is a no-op), crediting the
/// context it was charged to.
ZSHARD_RT_API zshard_rt_status zshard_rt_device_free(zshard_rt_device *device,
                                                     void *ptr);

/// Copies \p bytes from host memory \p src into the device block \p dst
/// (either placement), after the work already queued on the device's compute
/// stream; returns when the copy is complete.
ZSHARD_RT_API zshard_rt_status zshard_rt_device_copy_to_device(
    zshard_rt_device *device, void *dst, const void *src, uint64_t bytes);

/// Copies \p bytes from the device block \p src to host memory \p dst, after
/// the work already queued on the compute stream; returns when complete.
ZSHARD_RT_API zshard_rt_status zshard_rt_device_copy_to_host(
    zshard_rt_device *device, void *dst, const void *src, uint64_t bytes);

/// Sets \p bytes of the device block \p ptr to zero (on the compute stream).
ZSHARD_RT_API zshard_rt_status zshard_rt_device_memset_zero(
    zshard_rt_device *device, void *ptr, uint64_t bytes);

/// Waits until every stream of \p device is idle.
ZSHARD_RT_API zshard_rt_status
zshard_rt_device_synchronize(zshard_rt_device *device);

/// Sets the calling thread's current device: the one whose memory the MLIR
/// allocation hooks hand out and on which zshard_rt_step_sgemm() and
/// zshard_rt_step_gemm_bf16() run (cuBLAS on the compute stream for CUDA),
/// and whose streams NCCL collectives order with. NULL or a CPU device: the
/// host paths (the default). A CUDA device is also made the thread's current
/// CUDA device (cudaSetDevice; should that fail, the process ends with one
/// line, as the step entries do).
ZSHARD_RT_API void zshard_rt_set_current_device(zshard_rt_device *device);

/// The calling thread's current device from zshard_rt_set_current_device(),
/// or NULL.
ZSHARD_RT_API zshard_rt_device *zshard_rt_current_device(void);

//===----------------------------------------------------------------------===//
// Communication backends
//===----------------------------------------------------------------------===//

/// Writes the version code of the NCCL library loaded at run time to
/// \p *version (MAJOR*10000 + MINOR*100 + PATCH, e.g. 22809 for 2.28.9).
/// Returns ZSHARD_RT_ERROR_UNAVAILABLE (version 0) when built without NCCL.
ZSHARD_RT_API zshard_rt_status zshard_rt_nccl_version(int *version);

/// Initializes MPI for this process (MPI_THREAD_MULTIPLE requested) unless it
/// is already initialized, in which case the caller keeps ownership. \p argc
/// and \p argv may be NULL. Returns ZSHARD_RT_ERROR_UNAVAILABLE when built
/// without MPI.
ZSHARD_RT_API zshard_rt_status zshard_rt_mpi_init(int *argc, char ***argv);

/// Writes this process's rank in, and the size of, MPI_COMM_WORLD. Requires
/// MPI to be initialized (by zshard_rt_mpi_init() or the caller).
ZSHARD_RT_API zshard_rt_status zshard_rt_mpi_world(int *rank, int *size);

/// Finalizes MPI if zshard_rt_mpi_init() initialized it; otherwise does
/// nothing and succeeds.
ZSHARD_RT_API zshard_rt_status zshard_rt_mpi_finalize(void);

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//
//
// Ranks talk through communicators: the local backend runs N ranks as threads
// of one process (a local world), the MPI backend one rank per process. A
// launcher builds a grid over a communicator (collectively, every rank the
// same shape), makes it the current grid of each rank's thread, and compiled
// steps then call the zshard_rt_step_* collectives below over groups of grid
// axes. Reductions are deterministic: every element is reduced in rank order
// 0..N-1 (in f32 for the float types), so results are bitwise equal on every
// rank, in every run and on every backend. See docs/runtime.md, "Collectives".
//

/// zshard_rt_comm_dtype and zshard_rt_reduce_op (the dtype and op arguments
/// of the step collectives) are in zshard/abi/RuntimeCodes.h.

/// One rank's communicator.
typedef struct zshard_rt_comm zshard_rt_comm;
/// N ranks as threads of this process (the local backend).
typedef struct zshard_rt_local_world zshard_rt_local_world;
/// A device grid over a communicator and the groups along its axes.
typedef struct zshard_rt_grid zshard_rt_grid;

/// Creates a local world of \p ranks (>= 1) thread ranks in \p *out (NULL on
/// failure). With \p link_gbps or \p link_latency_us above 0, every
/// collective of the world (and of groups split from it) takes at least
/// latency + bytes-on-the-wire / bandwidth, bytes counted as a ring algorithm
/// sends them: an emulation of a network, for experiments.
ZSHARD_RT_API zshard_rt_status zshard_rt_local_world_create(
    int32_t ranks, double link_gbps, double link_latency_us,
    zshard_rt_local_world **out);

/// Destroys \p world (NULL is ignored) and its communicators. Grids built on
/// them stay usable; no collective may be running on the world's own
/// communicators.
ZSHARD_RT_API void zshard_rt_local_world_destroy(zshard_rt_local_world *world);

/// Writes rank \p rank's communicator of \p world to \p *out. It belongs to the
/// world (do not destroy it) and is used by one thread at a time.
ZSHARD_RT_API zshard_rt_status zshard_rt_local_world_comm(
    zshard_rt_local_world *world, int32_t rank, zshard_rt_comm **out);

/// Creates this process's communicator over (a duplicate of) MPI_COMM_WORLD
/// in \p *out; collective over MPI_COMM_WORLD. MPI must be initialized with
/// MPI_THREAD_MULTIPLE (zshard_rt_mpi_init() asks for it). Returns
/// ZSHARD_RT_ERROR_UNAVAILABLE when built without MPI.
ZSHARD_RT_API zshard_rt_status zshard_rt_mpi_comm_create(zshard_rt_comm **out);

/// Creates this process's NCCL communicator over \p device (a CUDA device)
/// in \p *out (NULL on failure); collective over the ranks of the run.
/// Collectives run on the device's communication stream, ordered after the
/// work queued on its compute stream by events, and the compute stream waits
/// for them by events too: no host blocking. Buffers are device memory;
/// others are staged through device memory and block the host. Rank and size,
/// and how the ncclUniqueId travels:
///  - under an MPI launch (MPI initialized, e.g. by zshard_rt_mpi_init()):
///    the rank and size of MPI_COMM_WORLD, rank 0's id broadcast over MPI;
///  - otherwise (one machine): the environment variables ZSHARD_RANK and
///    ZSHARD_WORLD_SIZE (both unset: rank 0 of 1) and a file rendezvous at
///    ZSHARD_NCCL_ID_FILE (needed when the size is above 1): rank 0 writes
///    the id there atomically, the others wait for it (at most the
///    collective timeout, ZSHARD_COLLECTIVE_TIMEOUT_S) and fail naming the
///    file.
/// A failing ncclCommInitRank is ZSHARD_RT_ERROR_COMMUNICATION with
/// ncclGetErrorString(). ZSHARD_RT_ERROR_UNAVAILABLE when built without NCCL.
ZSHARD_RT_API zshard_rt_status
zshard_rt_nccl_comm_create(zshard_rt_device *device, zshard_rt_comm **out);

/// Destroys a communicator from zshard_rt_mpi_comm_create() or
/// zshard_rt_nccl_comm_create() (NULL is
/// ignored). A local world's communicator is rejected with
/// ZSHARD_RT_ERROR_INVALID_ARGUMENT: it belongs to its world.
ZSHARD_RT_API zshard_rt_status zshard_rt_comm_destroy(zshard_rt_comm *comm);

/// Writes this rank's rank in, and the size of, \p comm.
ZSHARD_RT_API zshard_rt_status zshard_rt_comm_rank(const zshard_rt_comm *comm,
                                                   int32_t *rank);
ZSHARD_RT_API zshard_rt_status zshard_rt_comm_size(const zshard_rt_comm *comm,
                                                   int32_t *size);

/// Largest number of grid axes.
#define ZSHARD_RT_GRID_MAX_AXES 6

/// Builds a grid of \p shape (\p axes from 1 to ZSHARD_RT_GRID_MAX_AXES sizes,
/// product the size of \p comm) over \p comm in \p *out (NULL on failure).
/// Collective: every rank of \p comm calls it with the same shape (on the
/// local backend, each rank's thread). Rank r sits at the row-major
/// coordinates of r, the last axis varying fastest. The grid keeps groups of
/// its own: \p comm may be destroyed before it.
ZSHARD_RT_API zshard_rt_status zshard_rt_grid_create(zshard_rt_comm *comm,
                                                     int32_t axes,
                                                     const int64_t *shape,
                                                     zshard_rt_grid **out);

/// Waits for the collectives started on \p grid, then destroys it (NULL is
/// ignored). On MPI every rank destroys its grid (MPI_Comm_free).
ZSHARD_RT_API void zshard_rt_grid_destroy(zshard_rt_grid *grid);

/// Sets the calling thread's current grid, the one the zshard_rt_step_*
/// collectives use; NULL clears it. The launcher sets it on each rank's
/// thread before running a step.
ZSHARD_RT_API void zshard_rt_set_current_grid(zshard_rt_grid *grid);

/// Returns the calling thread's current grid, or NULL.
ZSHARD_RT_API zshard_rt_grid *zshard_rt_current_grid(void);

//
// Collectives of compiled steps. Like the other step entries they return
// nothing and abort with one line "zshard runtime: fatal: <entry>: <problem>"
// on misuse: no current grid, an axis or mask bit outside the grid, a bad
// dtype or op (avg of i32), a negative count, NULL buffers, overlapping
// buffers that are not in place, an unknown handle.
//
// axesMask: bit i set = grid axis i is in the group; the group is this rank
// and the ranks that differ from it only in those axes, ordered row-major
// over them (mask 0: this rank alone). Buffers are dense, count elements of
// dtype:
//  - all_gather: send countPerRank, recv groupSize * countPerRank elements,
//    group rank j's at [j * countPerRank, ...). In place: send == recv +
//    groupRank * countPerRank elements.
//  - reduce_scatter: send groupSize * countPerRank, recv countPerRank: group
//    rank r gets elements [r * countPerRank, (r+1) * countPerRank) of the
//    reduction. In place: send == recv.
//  - all_reduce: send and recv count elements. In place: send == recv.
// Buffers the runtime allocates for a collective are charged to
// ZSHARD_RT_MEM_COMMUNICATION of the calling thread's current memory context.
//

/// This rank's coordinate on \p axis of the current grid.
ZSHARD_RT_API int64_t zshard_rt_step_grid_coord(int32_t axis);

/// The size of \p axis of the current grid.
ZSHARD_RT_API int64_t zshard_rt_step_grid_size(int32_t axis);

ZSHARD_RT_API void zshard_rt_step_all_gather(int64_t axesMask, const void *send,
                                             void *recv, int64_t countPerRank,
                                             int32_t dtype);
ZSHARD_RT_API void zshard_rt_step_reduce_scatter(int64_t axesMask,
                                                 const void *send, void *recv,
                                                 int64_t countPerRank,
                                                 int32_t dtype, int32_t op);
ZSHARD_RT_API void zshard_rt_step_all_reduce(int64_t axesMask, const void *send,
                                             void *recv, int64_t count,
                                             int32_t dtype, int32_t op);

/// Asynchronous forms: start the collective and return a handle (> 0) at once;
/// the transfer proceeds on the group's progress thread while the step
/// computes. The buffers belong to the collective until
/// zshard_rt_step_wait() of the handle returns. Handles belong to the calling
/// thread; collectives of one group run in the order they were started, and
/// a blocking collective on a group first waits for the group's started ones.
ZSHARD_RT_API int64_t zshard_rt_step_all_gather_start(int64_t axesMask,
                                                      const void *send,
                                                      void *recv,
                                                      int64_t countPerRank,
                                                      int32_t dtype);
ZSHARD_RT_API int64_t zshard_rt_step_reduce_scatter_start(
    int64_t axesMask, const void *send, void *recv, int64_t countPerRank,
    int32_t dtype, int32_t op);
ZSHARD_RT_API int64_t zshard_rt_step_all_reduce_start(int64_t axesMask,
                                                      const void *send,
                                                      void *recv, int64_t count,
                                                      int32_t dtype,
                                                      int32_t op);

/// Blocks until the collective of \p handle has finished; the handle is then
/// spent. Aborts for a handle this thread has no pending collective for.
ZSHARD_RT_API void zshard_rt_step_wait(int64_t handle);

/// Number of the calling thread's started collectives not yet waited for (a
/// launcher checks it is 0 after each step).
ZSHARD_RT_API int64_t zshard_rt_step_pending_collectives(void);

/// Names the calling thread's subsequent collectives (blocking and started)
/// by the unit at \p unitIndex in the manifest's "units" list; -1 names none
/// (the default). Compiled steps call it before each collective; traces
/// (zshard_rt_trace) and launchers turn the index into the unit's name. Any
/// index below -1 aborts.
ZSHARD_RT_API void zshard_rt_step_set_collective_unit(int32_t unitIndex);

/// The calling thread's unit index from zshard_rt_step_set_collective_unit(),
/// or -1.
ZSHARD_RT_API int32_t zshard_rt_step_collective_unit(void);

/// Seconds the calling thread has spent blocked in the step collectives (the
/// blocking ones, whole, and zshard_rt_step_wait()) since it started or since
/// zshard_rt_step_comm_reset_counters(): the communication a step could not
/// hide behind compute ("exposed" communication).
ZSHARD_RT_API double zshard_rt_step_comm_wait_seconds(void);

/// Number of the calling thread's blocking step collectives and
/// zshard_rt_step_wait() calls, counted like
/// zshard_rt_step_comm_wait_seconds().
ZSHARD_RT_API uint64_t zshard_rt_step_comm_wait_calls(void);

/// Sets the calling thread's communication counters to zero.
ZSHARD_RT_API void zshard_rt_step_comm_reset_counters(void);

//===----------------------------------------------------------------------===//
// Tracing
//===----------------------------------------------------------------------===//
//
// A trace collects what a rank's collectives did and when, for a launcher to
// draw (zshard-run --trace writes Chrome's Trace Event Format). A launcher
// makes a trace current on a rank's thread while the step runs; the step
// collectives called or started on that thread then record into it: on the
// compute lane the time the thread was blocked (a blocking collective, a
// wait), on the communication lane each collective from the moment it began
// to run (on the thread that runs it: the caller's, or the group's progress
// thread for a started one) to its completion. With no current trace nothing
// is recorded and nothing is allocated or locked.
//

/// Seconds on the runtime's monotonic clock (CLOCK_MONOTONIC: the same clock
/// for every thread and process of one machine), as recorded in traces and
/// memory timelines.
ZSHARD_RT_API double zshard_rt_clock_seconds(void);

/// What a collective does (the kind of a trace event).
typedef enum zshard_rt_collective_kind {
  ZSHARD_RT_COLLECTIVE_ALL_GATHER = 0,
  ZSHARD_RT_COLLECTIVE_REDUCE_SCATTER = 1,
  ZSHARD_RT_COLLECTIVE_ALL_REDUCE = 2,
  ZSHARD_RT_COLLECTIVE_BARRIER = 3
} zshard_rt_collective_kind;

/// Returns "all_gather", "reduce_scatter", "all_reduce" or "barrier", or NULL
/// when \p kind is none of them.
ZSHARD_RT_API const char *zshard_rt_collective_kind_name(int32_t kind);

/// Where a trace event belongs.
typedef enum zshard_rt_trace_lane {
  /// The rank's thread blocked in a blocking collective or a wait.
  ZSHARD_RT_TRACE_COMPUTE = 0,
  /// A collective running, from its begin to its completion.
  ZSHARD_RT_TRACE_COMMUNICATION = 1
} zshard_rt_trace_lane;

/// One span of a trace.
typedef struct zshard_rt_trace_event {
  int32_t lane; ///< A zshard_rt_trace_lane.
  int32_t kind; ///< A zshard_rt_collective_kind.
  /// The unit index current (zshard_rt_step_set_collective_unit()) when the
  /// collective was called or started; -1: none.
  int32_t unit;
  int32_t started; ///< 1: a started collective; 0: a blocking one.
  /// The collective's size: the gathered buffer (all_gather), the input
  /// (reduce_scatter), the buffer (all_reduce), 0 (barrier).
  uint64_t bytes;
  double begin; ///< zshard_rt_clock_seconds() at the begin.
  double end;   ///< And at the end.
} zshard_rt_trace_event;

/// A list of trace events; thread-safe.
typedef struct zshard_rt_trace zshard_rt_trace;

/// Creates an empty trace in \p *out (NULL on failure).
ZSHARD_RT_API zshard_rt_status zshard_rt_trace_create(zshard_rt_trace **out);

/// Destroys \p trace (NULL is ignored). No collective started while it was
/// current may still be pending, and no thread may have it current.
ZSHARD_RT_API void zshard_rt_trace_destroy(zshard_rt_trace *trace);

/// Sets the calling thread's current trace (NULL: none, the default).
/// Collectives called or started on the thread record into it.
ZSHARD_RT_API void zshard_rt_set_current_trace(zshard_rt_trace *trace);

/// Returns the calling thread's current trace, or NULL.
ZSHARD_RT_API zshard_rt_trace *zshard_rt_current_trace(void);

/// Appends \p *event to \p trace (its lane and kind must be valid).
ZSHARD_RT_API zshard_rt_status zshard_rt_trace_record(
    zshard_rt_trace *trace, const zshard_rt_trace_event *event);

/// Writes the number of events of \p trace to \p *out.
ZSHARD_RT_API zshard_rt_status
zshard_rt_trace_event_count(const zshard_rt_trace *trace, uint64_t *out);

/// Copies event \p index (in the order recorded) to \p *out.
ZSHARD_RT_API zshard_rt_status zshard_rt_trace_get_event(
    const zshard_rt_trace *trace, uint64_t index, zshard_rt_trace_event *out);

/// Drops every event of \p trace (a launcher drains it after each step).
ZSHARD_RT_API zshard_rt_status zshard_rt_trace_clear(zshard_rt_trace *trace);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // ZSHARD_RUNTIME_ZSHARD_RT_H
