//===- CudaDevice.h - A rank's CUDA device ----------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One CUDA device of a rank (CUDA builds only; see device/Device.h):
///
///  - chosen by local rank: ZSHARD_LOCAL_RANK, else
///    OMPI_COMM_WORLD_LOCAL_RANK, else the rank modulo the device count;
///  - device memory from a DevicePool (caching, over cudaMalloc; never
///    managed memory); BufferPlacement::Host is cudaHostAlloc with
///    cudaHostAllocMapped | cudaHostAllocPortable: pinned host memory whose
///    pointer kernels use directly (unified addressing), for offloaded state;
///  - a compute stream (copies, zeroing, the step's cuBLAS products and
///    kernels launched through the mgpu ABI) and a communication stream
///    (NCCL), both non-blocking;
///  - a cuBLAS handle on the compute stream.
///
/// Construction fails with a DeviceFailure saying why: no driver, a driver
/// older than the CUDA runtime the library was built with (both versions),
/// no device, a local rank without a device.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CUDA_CUDADEVICE_H
#define ZSHARD_RUNTIME_LIB_CUDA_CUDADEVICE_H

#include "cuda/DevicePool.h"
#include "device/Device.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace zshard::rt {

class CudaDevice final : public Device {
public:
  /// The device of \p rank (see above), current on the calling thread
  /// afterwards.
  explicit CudaDevice(int32_t rank);
  ~CudaDevice() override;

  zshard_rt_device_kind kind() const override { return ZSHARD_RT_DEVICE_CUDA; }
  const std::string &name() const override { return deviceName; }
  int ordinal() const { return deviceOrdinal; }
  cudaStream_t computeStream() const { return compute; }
  cudaStream_t commStream() const { return comm; }
  DevicePool &pool() { return *devicePool; }

  void *allocate(zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category,
                 uint64_t bytes, BufferPlacement placement) override;
  void free(void *ptr) override;
  void copyToDevice(void *dst, const void *src, uint64_t bytes) override;
  void copyToHost(void *dst, const void *src, uint64_t bytes) override;
  void memsetZero(void *ptr, uint64_t bytes) override;
  void synchronize() override;
  void makeCurrent() override;

  void *stepAllocate(zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category,
                     uint64_t bytes, uint64_t alignment) override;
  bool stepFree(void *ptr) override;
  void stepSgemm(const StepGemmShape &shape, const float *a, int64_t strideA,
                 const float *b, int64_t strideB, float *c,
                 int64_t strideC) override;
  void stepGemmBf16(const StepGemmShape &shape, const uint16_t *a,
                    int64_t strideA, const uint16_t *b, int64_t strideB,
                    float *c, int64_t strideC) override;
  void stepAttentionForward(const StepAttentionShape &shape, const float *q,
                            const float *k, const float *v, float *out,
                            float *lse) override;
  void stepAttentionBackward(const StepAttentionShape &shape, const float *q,
                             const float *k, const float *v, const float *out,
                             const float *lse, const float *dout, float *dq,
                             float *dk, float *dv) override;

  /// Throws a DeviceFailure "<name>: <call> failed: <error>" unless \p error
  /// is cudaSuccess.
  void check(cudaError_t error, const char *call) const;

private:
  /// C += op(A) op(B) on cuBLAS for both step gemms: inputs of
  /// \p inputType (\p inputBytes each), C in f32; \p entry names the ABI
  /// entry in a fatal error.
  void stepGemm(const char *entry, const StepGemmShape &shape, const void *a,
                int64_t strideA, const void *b, int64_t strideB,
                cudaDataType inputType, size_t inputBytes, float *c,
                int64_t strideC);

  /// A pinned host block of allocate(BufferPlacement::Host).
  struct HostBlock {
    uint64_t bytes;
    zshard_rt_mem_ctx *ctx;
  };

  /// The cuBLAS handle, created on first use on the compute stream.
  cublasHandle_t blas();
  bool freeHost(void *ptr);

  std::string deviceName;
  int deviceOrdinal = 0;
  cudaStream_t compute = nullptr;
  cudaStream_t comm = nullptr;
  cublasHandle_t blasHandle = nullptr;
  std::unique_ptr<DevicePool> devicePool;
  std::mutex hostMutex;
  std::unordered_map<void *, HostBlock> hostBlocks;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CUDA_CUDADEVICE_H
