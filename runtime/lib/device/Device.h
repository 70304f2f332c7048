//===- Device.h - Where a rank's step buffers live --------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A device holds a rank's step buffers and, while it is the current device
/// of the rank's thread (zshard_rt_set_current_device), serves the compiled
/// step's allocations and matrix products.
///
///  - CpuDevice (device/CpuDevice.h): both placements are host memory
///    (zshard_rt_cpu_alloc); the step entries keep their CPU paths.
///  - CudaDevice (cuda/CudaDevice.h, CUDA builds): BufferPlacement::Device is
///    device memory from a caching pool over cudaMalloc, BufferPlacement::Host
///    is pinned, mapped host memory that kernels can read and write through its
///    own pointer (unified addressing): how offloaded optimizer state runs on
///    CUDA. One compute stream and one communication stream.
///
/// Every allocation is charged to a memory context like a CPU allocation
/// (the bytes asked for): BufferPlacement::Device to the category given,
/// BufferPlacement::Host to ZSHARD_RT_MEM_HOST_OFFLOAD.
///
/// The object lives inside libzshard_rt.so; launchers reach it through the C
/// ABI (zshard_rt_device_*), so that the step entries and the launcher see
/// one device. Errors throw a Failure with one line naming the device.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_DEVICE_DEVICE_H
#define ZSHARD_RUNTIME_LIB_DEVICE_DEVICE_H

#include "core/Failure.h"
#include "step/StepAttention.h"
#include "step/StepGemm.h"

#include "zshard/runtime/zshard_rt.h"

#include <cstdint>
#include <memory>
#include <string>

namespace zshard::rt {

/// Where a buffer lives: on the device (its own memory), or in host memory
/// the device can use (offloaded state).
enum class BufferPlacement { Device, Host };

/// The category an allocation of \p category placed at \p placement is
/// charged to: ZSHARD_RT_MEM_HOST_OFFLOAD for BufferPlacement::Host.
zshard_rt_mem_category chargedCategory(zshard_rt_mem_category category,
                                       BufferPlacement placement);

/// A Failure of a device with the status the C ABI reports for it:
/// ZSHARD_RT_ERROR_UNAVAILABLE (no driver, no GPU, not built),
/// ZSHARD_RT_ERROR_OUT_OF_MEMORY, ZSHARD_RT_ERROR_DEVICE (a failing call).
class DeviceFailure : public Failure {
public:
  DeviceFailure(zshard_rt_status status, const std::string &message)
      : Failure(message), status(status) {}
  zshard_rt_status status;
};

class Device {
public:
  virtual ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  virtual zshard_rt_device_kind kind() const = 0;
  /// "cpu", or "cuda:<ordinal> (<product name>)".
  virtual const std::string &name() const = 0;

  /// \p bytes (0 gives a distinct, freeable block) at \p placement, charged
  /// to \p ctx (see chargedCategory), aligned to at least 64 bytes. Throws a
  /// Failure naming the bytes and the category when memory runs out.
  virtual void *allocate(zshard_rt_mem_ctx *ctx,
                         zshard_rt_mem_category category, uint64_t bytes,
                         BufferPlacement placement) = 0;
  /// Frees a block of allocate() (NULL: nothing), crediting its context.
  virtual void free(void *ptr) = 0;

  /// Host memory to a block of allocate() (either placement), and back.
  /// Both return when the copy is complete (after the work queued before on
  /// the compute stream).
  virtual void copyToDevice(void *dst, const void *src, uint64_t bytes) = 0;
  virtual void copyToHost(void *dst, const void *src, uint64_t bytes) = 0;
  /// Sets \p bytes of a block of allocate() to zero.
  virtual void memsetZero(void *ptr, uint64_t bytes) = 0;
  /// Waits until everything queued on the device has finished.
  virtual void synchronize() = 0;
  /// Makes the device current for the CUDA runtime on the calling thread
  /// (zshard_rt_set_current_device calls it); nothing for the host.
  virtual void makeCurrent() {}

  //===--------------------------------------------------------------------===//
  // The compiled step's entries, while this device is current on a thread.
  // A CpuDevice is never current (the step entries keep their CPU paths).
  // They cannot fail softly: problems end the process (stepFatal).
  //===--------------------------------------------------------------------===//

  /// A temporary of the step (the MLIR allocation hooks): device memory
  /// aligned to \p alignment (at most 2 MiB), charged to \p category of
  /// \p ctx.
  virtual void *stepAllocate(zshard_rt_mem_ctx *ctx,
                             zshard_rt_mem_category category, uint64_t bytes,
                             uint64_t alignment);
  /// Frees \p ptr when it is a block of this device (of stepAllocate() or
  /// allocate()) and returns true; false when it is not this device's.
  virtual bool stepFree(void *ptr);
  /// The step's f32 and bf16 products (C_i += op(A_i) op(B_i), or C_i =
  /// op(A_i) op(B_i) when the shape does not accumulate; row-major),
  /// after the common checks (step/StepGemm.h).
  virtual void stepSgemm(const StepGemmShape &shape, const float *a,
                         int64_t strideA, const float *b, int64_t strideB,
                         float *c, int64_t strideC);
  virtual void stepGemmBf16(const StepGemmShape &shape, const uint16_t *a,
                            int64_t strideA, const uint16_t *b, int64_t strideB,
                            float *c, int64_t strideC);
  /// The step's causal attention and its backward (step/StepAttention.h),
  /// on this device's memory, after the common checks.
  virtual void stepAttentionForward(const StepAttentionShape &shape,
                                    const float *q, const float *k,
                                    const float *v, float *out, float *lse);
  virtual void stepAttentionBackward(const StepAttentionShape &shape,
                                     const float *q, const float *k,
                                     const float *v, const float *out,
                                     const float *lse, const float *dout,
                                     float *dq, float *dk, float *dv);

protected:
  Device() = default;
};

/// A CUDA device for \p rank (see zshard_rt_device_create()). Defined in
/// cuda/CudaDevice.cpp, or in cuda/Unavailable.cpp, which throws a
/// DeviceFailure (UNAVAILABLE) in a build without CUDA.
std::unique_ptr<Device> makeCudaDevice(int32_t rank);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_DEVICE_DEVICE_H
