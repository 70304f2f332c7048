//===- SelfTest.cu - Kernels and self-test of the CUDA device -------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The first kernels of the runtime (fill and axpy) and a self-test that runs
// them on one device with plain device memory (never managed memory) and
// checks every element on the host.
//
//===----------------------------------------------------------------------===//

#include "core/Error.h"
#include "cuda/CudaStatus.h"

#include <cuda_runtime.h>

#include <string>
#include <vector>

using namespace zshard::rt;

namespace {

constexpr const char *entry = "zshard_rt_cuda_self_test";

__global__ void fillKernel(float *y, float value, int64_t n) {
  int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    y[i] = value;
}

__global__ void axpyKernel(float a, const float *x, float *y, int64_t n) {
  int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    y[i] = a * x[i] + y[i];
}

/// Owns what the self-test acquires and gives it back on every path,
/// restoring the device that was current before.
struct Resources {
  int previousDevice = -1;
  cudaStream_t stream = nullptr;
  float *x = nullptr;
  float *y = nullptr;

  ~Resources() {
    if (x)
      cudaFree(x);
    if (y)
      cudaFree(y);
    if (stream)
      cudaStreamDestroy(stream);
    if (previousDevice >= 0)
      cudaSetDevice(previousDevice);
  }
};

#define ZSHARD_RT_CUDA_CHECK(call)                                             \
  do {                                                                         \
    if (cudaError_t error_ = (call))                                           \
      return cudaFailure(entry, #call, error_);                                \
  } while (false)

} // namespace

extern "C" zshard_rt_status zshard_rt_cuda_self_test(int device, int64_t n) {
  if (n < 0)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": n = " + std::to_string(n) +
                        " is negative");
  int count = 0;
  if (zshard_rt_status s = countCudaDevices(entry, &count))
    return s;
  if (device < 0 || device >= count)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": device " + std::to_string(device) +
                        " is not in [0, " + std::to_string(count) + ")");

  // Exactly representable values, so the check can ask for equality whether
  // or not the compiler fuses a * x + y.
  const float a = 2.0f, fill = 1.5f;
  std::vector<float> hostX(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    hostX[i] = static_cast<float>(i % 4096);

  Resources r;
  ZSHARD_RT_CUDA_CHECK(cudaGetDevice(&r.previousDevice));
  ZSHARD_RT_CUDA_CHECK(cudaSetDevice(device));
  ZSHARD_RT_CUDA_CHECK(
      cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  size_t bytes = static_cast<size_t>(n) * sizeof(float);
  ZSHARD_RT_CUDA_CHECK(cudaMalloc(&r.x, bytes > 0 ? bytes : 1));
  ZSHARD_RT_CUDA_CHECK(cudaMalloc(&r.y, bytes > 0 ? bytes : 1));
  std::vector<float> hostY(static_cast<size_t>(n));
  if (n > 0) {
    ZSHARD_RT_CUDA_CHECK(cudaMemcpyAsync(r.x, hostX.data(), bytes,
                                         cudaMemcpyHostToDevice, r.stream));
    const int threads = 256;
    int64_t blocksNeeded = (n + threads - 1) / threads;
    int blocks = static_cast<int>(blocksNeeded < 4096 ? blocksNeeded : 4096);
    fillKernel<<<blocks, threads, 0, r.stream>>>(r.y, fill, n);
    ZSHARD_RT_CUDA_CHECK(cudaGetLastError());
    axpyKernel<<<blocks, threads, 0, r.stream>>>(a, r.x, r.y, n);
    ZSHARD_RT_CUDA_CHECK(cudaGetLastError());
    ZSHARD_RT_CUDA_CHECK(cudaMemcpyAsync(hostY.data(), r.y, bytes,
                                         cudaMemcpyDeviceToHost, r.stream));
  }
  ZSHARD_RT_CUDA_CHECK(cudaStreamSynchronize(r.stream));

  for (int64_t i = 0; i < n; ++i) {
    float expected = a * hostX[i] + fill;
    if (hostY[i] != expected)
      return setError(ZSHARD_RT_ERROR_INTERNAL,
                      std::string(entry) + ": device " +
                          std::to_string(device) + ", element " +
                          std::to_string(i) + " is " +
                          std::to_string(hostY[i]) + ", expected " +
                          std::to_string(expected));
  }
  return ZSHARD_RT_OK;
}
