//===- CudaDeviceTest.cpp - The CUDA device and its step entries ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// requires-gpu. The CUDA device through the C ABI: allocation of both
// placements and their accounting, copies and zeroing, the pool's reuse, a
// clear out-of-memory error; with the device current, the MLIR hooks hand
// out device memory and zshard_rt_step_sgemm / zshard_rt_step_gemm_bf16 run
// on cuBLAS, compared with the CPU paths on every transpose combination,
// batches, padding and broadcast operands, including operands in pinned
// host memory (offloaded state used by a kernel).
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using zshard::test::GpuFixture;

namespace {

using CudaDevice = GpuFixture;

bool isDeviceMemory(const void *ptr) {
  cudaPointerAttributes attributes;
  return cudaPointerGetAttributes(&attributes, ptr) == cudaSuccess &&
         attributes.type == cudaMemoryTypeDevice;
}

uint16_t toBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

TEST_F(CudaDevice, NameKindAndPlacements) {
  EXPECT_EQ(zshard_rt_device_get_kind(device), ZSHARD_RT_DEVICE_CUDA);
  EXPECT_EQ(std::string(zshard_rt_device_name(device)).rfind("cuda:0 (", 0), 0u)
      << zshard_rt_device_name(device);
  void *onDevice = nullptr, *onHost = nullptr;
  ASSERT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_PARAMETERS, 1000,
                                   ZSHARD_RT_PLACEMENT_DEVICE, &onDevice),
            ZSHARD_RT_OK);
  ASSERT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_OPTIMIZER_STATE,
                                   800, ZSHARD_RT_PLACEMENT_HOST, &onHost),
            ZSHARD_RT_OK);
  EXPECT_TRUE(isDeviceMemory(onDevice));
  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, onHost), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  EXPECT_EQ(attributes.devicePointer, onHost); // mapped, same address (UVA)
  EXPECT_EQ(reinterpret_cast<uintptr_t>(onDevice) % 256, 0u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_PARAMETERS), 1000u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_HOST_OFFLOAD), 800u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_OPTIMIZER_STATE), 0u);

  std::vector<unsigned char> in(1000), out(1000);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<unsigned char>(i * 13 + 1);
  for (void *block : {onDevice, onHost}) {
    size_t bytes = block == onHost ? 800 : 1000;
    ASSERT_EQ(zshard_rt_device_copy_to_device(device, block, in.data(), bytes),
              ZSHARD_RT_OK);
    ASSERT_EQ(zshard_rt_device_memset_zero(device, block, 100), ZSHARD_RT_OK);
    ASSERT_EQ(zshard_rt_device_copy_to_host(device, out.data(), block, bytes),
              ZSHARD_RT_OK);
    for (size_t i = 0; i < bytes; ++i)
      ASSERT_EQ(out[i], i < 100 ? 0 : in[i]) << i;
  }
  release(onDevice);
  release(onHost);
  EXPECT_EQ(live(ZSHARD_RT_MEM_PARAMETERS), 0u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_HOST_OFFLOAD), 0u);
  EXPECT_EQ(zshard_rt_device_synchronize(device), ZSHARD_RT_OK);
}

TEST_F(CudaDevice, PoolReusesFreedBlocks) {
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_OTHER, 3 << 20,
                                   ZSHARD_RT_PLACEMENT_DEVICE, &a),
            ZSHARD_RT_OK);
  release(a);
  ASSERT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_OTHER, 3 << 20,
                                   ZSHARD_RT_PLACEMENT_DEVICE, &b),
            ZSHARD_RT_OK);
  EXPECT_EQ(a, b);
  release(b);
  int local = 0;
  EXPECT_EQ(zshard_rt_device_free(device, &local),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
}

TEST_F(CudaDevice, OutOfMemorySaysBytesAndWhat) {
  void *ptr = nullptr;
  uint64_t huge = uint64_t(1) << 50;
  EXPECT_EQ(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_ACTIVATIONS, huge,
                                   ZSHARD_RT_PLACEMENT_DEVICE, &ptr),
            ZSHARD_RT_ERROR_OUT_OF_MEMORY);
  std::string message = zshard_rt_last_error_message();
  EXPECT_NE(message.find("out of device memory: " + std::to_string(huge) +
                         " bytes for activations"),
            std::string::npos)
      << message;
  EXPECT_EQ(live(ZSHARD_RT_MEM_ACTIVATIONS), 0u);
}

TEST_F(CudaDevice, HooksHandOutDeviceMemoryWhenCurrent) {
  zshard_rt_set_current_mem_ctx(ctx);
  zshard_rt_set_current_device(device);
  void *block = _mlir_memref_to_llvm_aligned_alloc(4096, 10000);
  EXPECT_TRUE(isDeviceMemory(block));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 4096, 0u);
  EXPECT_EQ(live(ZSHARD_RT_MEM_ACTIVATIONS), 10000u);
  _mlir_memref_to_llvm_free(block);
  EXPECT_EQ(live(ZSHARD_RT_MEM_ACTIVATIONS), 0u);
  // A host block allocated before the device became current frees as one.
  zshard_rt_set_current_device(nullptr);
  void *host = _mlir_memref_to_llvm_alloc(64);
  zshard_rt_set_current_device(device);
  _mlir_memref_to_llvm_free(host);
  EXPECT_EQ(live(ZSHARD_RT_MEM_ACTIVATIONS), 0u);
}

struct GemmCase {
  int64_t batch, m, n, k;
  bool transA, transB;
  int64_t pad;
  bool broadcastB;
};

/// Runs one product with and without the device current and compares.
template <typename In>
void compareWithCpu(GpuFixture &f, const GemmCase &c, bool bf16,
                    zshard_rt_placement placement, unsigned seed) {
  SCOPED_TRACE("batch=" + std::to_string(c.batch) +
               " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
               " k=" + std::to_string(c.k) + " ta=" + std::to_string(c.transA) +
               " tb=" + std::to_string(c.transB) +
               " pad=" + std::to_string(c.pad));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  int64_t aCols = c.transA ? c.m : c.k, aRows = c.transA ? c.k : c.m;
  int64_t bCols = c.transB ? c.k : c.n, bRows = c.transB ? c.n : c.k;
  int64_t lda = aCols + c.pad, ldb = bCols + c.pad, ldc = c.n + c.pad;
  int64_t strideA = aRows * lda, strideB = c.broadcastB ? 0 : bRows * ldb,
          strideC = c.m * ldc;
  std::vector<In> a(size_t(c.batch * strideA)),
      b(size_t(c.batch * bRows * ldb));
  std::vector<float> cHost(size_t(c.batch * strideC));
  auto value = [&] {
    float x = dist(rng);
    if constexpr (sizeof(In) == 2)
      return toBf16(x);
    else
      return x;
  };
  for (In &x : a)
    x = value();
  for (In &x : b)
    x = value();
  for (float &x : cHost)
    x = dist(rng);
  std::vector<float> expected = cHost;
  auto gemm = [&](const In *A, const In *B, float *C) {
    if constexpr (sizeof(In) == 2)
      zshard_rt_step_gemm_bf16(c.transA, c.transB, c.batch, c.m, c.n, c.k, A,
                               lda, strideA, B, ldb, strideB, C, ldc, strideC,
                               1);
    else
      zshard_rt_step_sgemm(c.transA, c.transB, c.batch, c.m, c.n, c.k, A, lda,
                           strideA, B, ldb, strideB, C, ldc, strideC, 1);
  };
  (void)bf16;
  gemm(a.data(), b.data(), expected.data()); // the CPU path

  auto place = [&](const auto &host) {
    using T = typename std::decay_t<decltype(host)>::value_type;
    void *ptr = nullptr;
    EXPECT_EQ(zshard_rt_device_alloc(f.device, f.ctx, ZSHARD_RT_MEM_OTHER,
                                     host.size() * sizeof(T), placement, &ptr),
              ZSHARD_RT_OK);
    EXPECT_EQ(zshard_rt_device_copy_to_device(f.device, ptr, host.data(),
                                              host.size() * sizeof(T)),
              ZSHARD_RT_OK);
    return static_cast<T *>(ptr);
  };
  In *dA = place(a), *dB = place(b);
  float *dC = place(cHost);
  zshard_rt_set_current_device(f.device);
  gemm(dA, dB, dC);
  zshard_rt_set_current_device(nullptr);
  std::vector<float> got(cHost.size());
  ASSERT_EQ(zshard_rt_device_copy_to_host(f.device, got.data(), dC,
                                          got.size() * sizeof(float)),
            ZSHARD_RT_OK);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], expected[i],
                1e-4 * (1 + std::fabs(expected[i])) * std::sqrt(double(c.k)))
        << "element " << i;
  f.release(dA);
  f.release(dB);
  f.release(dC);
}

const GemmCase gemmCases[] = {
    {1, 5, 7, 3, false, false, 0, false},
    {1, 5, 7, 3, true, false, 0, false},
    {1, 5, 7, 3, false, true, 0, false},
    {1, 5, 7, 3, true, true, 0, false},
    {3, 33, 17, 65, false, false, 3, false},
    {3, 33, 17, 65, true, true, 3, false},
    {4, 64, 64, 32, false, true, 0, true},
    {2, 1, 9, 4, true, false, 1, false},
};

TEST_F(CudaDevice, SgemmOnCublasMatchesCpu) {
  unsigned seed = 1;
  for (const GemmCase &c : gemmCases)
    compareWithCpu<float>(*this, c, false, ZSHARD_RT_PLACEMENT_DEVICE, seed++);
}

TEST_F(CudaDevice, Bf16GemmOnCublasMatchesCpu) {
  unsigned seed = 100;
  for (const GemmCase &c : gemmCases)
    compareWithCpu<uint16_t>(*this, c, true, ZSHARD_RT_PLACEMENT_DEVICE,
                             seed++);
}

TEST_F(CudaDevice, ProductsReadAndWritePinnedHostMemory) {
  // Offloaded state: operands and result in mapped host memory.
  compareWithCpu<float>(*this, {2, 16, 8, 12, false, true, 1, false}, false,
                        ZSHARD_RT_PLACEMENT_HOST, 7);
  compareWithCpu<uint16_t>(*this, {2, 16, 8, 12, true, false, 0, false}, true,
                           ZSHARD_RT_PLACEMENT_HOST, 8);
}

TEST_F(CudaDevice, CountersCountDeviceProducts) {
  zshard_rt_step_sgemm_reset_counters();
  compareWithCpu<float>(*this, {1, 4, 4, 4, false, false, 0, false}, false,
                        ZSHARD_RT_PLACEMENT_DEVICE, 9);
  EXPECT_EQ(zshard_rt_step_sgemm_calls(), 2u); // CPU and device
  EXPECT_EQ(zshard_rt_step_sgemm_flops(), 2 * 2.0 * 64);
}

} // namespace
