//===- GpuHostAbi.cpp - MLIR's GPU host ABI on the runtime's devices ------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// What host code lowered by MLIR's gpu-to-llvm (LLVM/MLIR 22) calls for
// kernel launches, streams, events and device memory: the mgpu* functions
// of MLIR's CudaRuntimeWrappers, with the signatures gpu-to-llvm and the
// gpu.binary translation emit. They run on the calling thread's current
// CUDA device (zshard_rt_set_current_device), so that a compiled step's
// kernels, its cuBLAS products and its NCCL collectives share that device's
// memory pool and streams:
//
//  - mgpuStreamCreate hands out the device's compute stream (destroying it is
//    a no-op), so kernels are ordered with the products and collectives;
//  - mgpuMemAlloc takes device memory from the device's pool, charged like
//    the step's other temporaries (current memory context and category);
//    host_shared memory is pinned, mapped host memory, never managed memory;
//  - modules are loaded lazily, per device, at a function's first lookup
//    (the step's constructor runs at dlopen, before any device is current);
//  - modules, launches and 16/32-bit memsets use the driver API, whose entry
//    points come through the CUDA runtime (cuda/DriverApi.h).
//
// Upstream's wrappers print a failure and go on; these end the process with
// one line "zshard runtime: fatal: <entry>: ..." (compiled code cannot
// handle an error), as every step entry does. Not provided: the cuSPARSE /
// cuSPARSELt entries (gpu.create_* sparse ops) and the TMA descriptors of
// nvgpu; a step using them fails to load with "undefined symbol".
//
// Builds without CUDA do not define these symbols at all: a step library
// that needs them fails to load (RTLD_NOW) with "undefined symbol:
// mgpu...", which zshard-run reports as a CUDA artifact on a runtime built
// without CUDA (step/StepLibrary.cpp).
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "cuda/DriverApi.h"
#include "device/CurrentDevice.h"
#include "step/Fatal.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

using namespace zshard::rt;

namespace {

CudaDevice &currentCuda(const char *entry) {
  auto *device = dynamic_cast<CudaDevice *>(currentStepDevice());
  if (!device)
    stepFatal(entry, "no current CUDA device on this thread (a CUDA step runs "
                     "under zshard-run --device cuda, which sets one with "
                     "zshard_rt_set_current_device)");
  try {
    device->makeCurrent();
  } catch (const Failure &failure) {
    stepFatal(entry, "%s", failure.what());
  }
  return *device;
}

const DriverApi &driver(const char *entry) {
  std::string why;
  const DriverApi *api = driverApi(why);
  if (!api)
    stepFatal(entry, "%s", why.c_str());
  return *api;
}

void checkDriver(const char *entry, const DriverApi &api, CUresult result,
                 const char *call) {
  if (result != CUDA_SUCCESS)
    stepFatal(entry, "%s failed: %s", call, api.errorName(result).c_str());
}

void checkRuntime(const char *entry, cudaError_t error, const char *call) {
  if (error != cudaSuccess)
    stepFatal(entry, "%s failed: %s: %s", call, cudaGetErrorName(error),
              cudaGetErrorString(error));
}

unsigned dimension(const char *entry, intptr_t value, const char *what) {
  if (value < 1 || value > intptr_t(UINT32_MAX))
    stepFatal(entry, "%s = %lld is not a launch dimension", what,
              static_cast<long long>(value));
  return unsigned(value);
}

/// Allows \p smem bytes of dynamic shared memory for \p function when that
/// is above the default 48 KiB.
void allowSharedMemory(const char *entry, const DriverApi &api,
                       CUfunction function, int32_t smem) {
  if (smem > 48 * 1024)
    checkDriver(
        entry, api,
        api.funcSetAttribute(
            function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
        "cuFuncSetAttribute (dynamic shared memory)");
}

/// A module of a compiled step: its embedded binary (a cubin or fatbin, or
/// PTX to JIT), loaded on each device that asks for one of its functions.
struct LazyModule {
  const void *data;
  bool jit;
  int optLevel;
  std::mutex mutex;
  std::map<int, CUmodule> loaded; ///< by device ordinal
};

/// \p module loaded on \p device (current on this thread), loading it the
/// first time.
CUmodule loadOn(const char *entry, const DriverApi &api, CudaDevice &device,
                LazyModule &module) {
  std::lock_guard<std::mutex> lock(module.mutex);
  auto [it, inserted] = module.loaded.try_emplace(device.ordinal(), nullptr);
  if (!inserted)
    return it->second;
  CUmodule loaded = nullptr;
  if (!module.jit) {
    CUresult result = api.moduleLoadData(&loaded, module.data);
    if (result != CUDA_SUCCESS) {
      module.loaded.erase(it);
      stepFatal(entry, "cuModuleLoadData failed: %s",
                api.errorName(result).c_str());
    }
  } else {
    char log[4096] = {0};
    CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL,
                              CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {reinterpret_cast<void *>(intptr_t(module.optLevel)), log,
                      reinterpret_cast<void *>(intptr_t(sizeof(log) - 1))};
    CUresult result =
        api.moduleLoadDataEx(&loaded, module.data, 3, options, values);
    if (result != CUDA_SUCCESS) {
      module.loaded.erase(it);
      stepFatal(entry, "cuModuleLoadDataEx (PTX, -O%d) failed: %s%s%s",
                module.optLevel, api.errorName(result).c_str(),
                log[0] ? ": " : "", log);
    }
  }
  it->second = loaded;
  return loaded;
}

} // namespace

namespace zshard::rt {
/// The head of MLIR's ranked memref descriptor, as the host-register entries
/// receive it: allocated and aligned pointers and the offset, followed by
/// rank sizes and rank strides.
struct MemRefHead {
  char *allocated;
  char *aligned;
  int64_t offset;
};
} // namespace zshard::rt

extern "C" {

// The step's constructor "loads" its embedded binary when step.so is
// opened, on whatever thread opens it and before any device is current;
// and one process may run ranks on several GPUs, each with its own
// context. So loading only records the binary; each device loads it on its
// first mgpuModuleGetFunction, with that device current.
ZSHARD_RT_API CUmodule mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  (void)gpuBlobSize; // cubin and fatbin headers carry their own size
  return reinterpret_cast<CUmodule>(new LazyModule{data, false, 0, {}, {}});
}

ZSHARD_RT_API CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  return reinterpret_cast<CUmodule>(
      new LazyModule{data, true, optLevel, {}, {}});
}

ZSHARD_RT_API void mgpuModuleUnload(CUmodule module) {
  auto *lazy = reinterpret_cast<LazyModule *>(module);
  if (!lazy)
    return;
  std::string why;
  if (const DriverApi *api = driverApi(why))
    for (auto &[ordinal, loaded] : lazy->loaded)
      (void)api->moduleUnload(loaded); // process teardown: nothing to report
  delete lazy;
}

ZSHARD_RT_API CUfunction mgpuModuleGetFunction(CUmodule module,
                                               const char *name) {
  const char *entry = "mgpuModuleGetFunction";
  CudaDevice &device = currentCuda(entry);
  const DriverApi &api = driver(entry);
  CUmodule loaded =
      loadOn(entry, api, device, *reinterpret_cast<LazyModule *>(module));
  CUfunction function = nullptr;
  CUresult result = api.moduleGetFunction(&function, loaded, name);
  if (result != CUDA_SUCCESS)
    stepFatal(entry, "cuModuleGetFunction('%s') failed: %s", name ? name : "",
              api.errorName(result).c_str());
  return function;
}

ZSHARD_RT_API void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                    intptr_t gridY, intptr_t gridZ,
                                    intptr_t blockX, intptr_t blockY,
                                    intptr_t blockZ, int32_t smem,
                                    CUstream stream, void **params,
                                    void **extra, size_t paramsCount) {
  const char *entry = "mgpuLaunchKernel";
  currentCuda(entry);
  const DriverApi &api = driver(entry);
  (void)paramsCount;
  allowSharedMemory(entry, api, function, smem);
  checkDriver(entry, api,
              api.launchKernel(function, dimension(entry, gridX, "gridX"),
                               dimension(entry, gridY, "gridY"),
                               dimension(entry, gridZ, "gridZ"),
                               dimension(entry, blockX, "blockX"),
                               dimension(entry, blockY, "blockY"),
                               dimension(entry, blockZ, "blockZ"),
                               unsigned(smem), stream, params, extra),
              "cuLaunchKernel");
}

ZSHARD_RT_API void mgpuLaunchClusterKernel(
    CUfunction function, intptr_t clusterX, intptr_t clusterY,
    intptr_t clusterZ, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
    intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t smem,
    CUstream stream, void **params, void **extra, size_t paramsCount) {
  const char *entry = "mgpuLaunchClusterKernel";
  currentCuda(entry);
  const DriverApi &api = driver(entry);
  (void)paramsCount;
  allowSharedMemory(entry, api, function, smem);
  checkDriver(
      entry, api,
      api.funcSetAttribute(
          function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
      "cuFuncSetAttribute (non-portable cluster size)");
  CUlaunchAttribute attribute;
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = dimension(entry, clusterX, "clusterX");
  attribute.value.clusterDim.y = dimension(entry, clusterY, "clusterY");
  attribute.value.clusterDim.z = dimension(entry, clusterZ, "clusterZ");
  CUlaunchConfig config = {};
  config.gridDimX = dimension(entry, gridX, "gridX");
  config.gridDimY = dimension(entry, gridY, "gridY");
  config.gridDimZ = dimension(entry, gridZ, "gridZ");
  config.blockDimX = dimension(entry, blockX, "blockX");
  config.blockDimY = dimension(entry, blockY, "blockY");
  config.blockDimZ = dimension(entry, blockZ, "blockZ");
  config.sharedMemBytes = unsigned(smem);
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  checkDriver(entry, api, api.launchKernelEx(&config, function, params, extra),
              "cuLaunchKernelEx (cluster launch)");
}

ZSHARD_RT_API CUstream mgpuStreamCreate(void) {
  return currentCuda("mgpuStreamCreate").computeStream();
}

ZSHARD_RT_API void mgpuStreamDestroy(CUstream stream) {
  const char *entry = "mgpuStreamDestroy";
  CudaDevice &device = currentCuda(entry);
  if (stream == device.computeStream() || stream == device.commStream())
    return; // the device's own streams live as long as the device
  checkRuntime(entry, cudaStreamDestroy(stream), "cudaStreamDestroy");
}

ZSHARD_RT_API void mgpuStreamSynchronize(CUstream stream) {
  const char *entry = "mgpuStreamSynchronize";
  currentCuda(entry);
  checkRuntime(entry, cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

ZSHARD_RT_API void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  const char *entry = "mgpuStreamWaitEvent";
  currentCuda(entry);
  checkRuntime(entry, cudaStreamWaitEvent(stream, event, 0),
               "cudaStreamWaitEvent");
}

ZSHARD_RT_API CUevent mgpuEventCreate(void) {
  const char *entry = "mgpuEventCreate";
  currentCuda(entry);
  cudaEvent_t event = nullptr;
  checkRuntime(entry, cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
               "cudaEventCreateWithFlags");
  return event;
}

ZSHARD_RT_API void mgpuEventDestroy(CUevent event) {
  const char *entry = "mgpuEventDestroy";
  currentCuda(entry);
  checkRuntime(entry, cudaEventDestroy(event), "cudaEventDestroy");
}

ZSHARD_RT_API void mgpuEventSynchronize(CUevent event) {
  const char *entry = "mgpuEventSynchronize";
  currentCuda(entry);
  checkRuntime(entry, cudaEventSynchronize(event), "cudaEventSynchronize");
}

ZSHARD_RT_API void mgpuEventRecord(CUevent event, CUstream stream) {
  const char *entry = "mgpuEventRecord";
  currentCuda(entry);
  checkRuntime(entry, cudaEventRecord(event, stream), "cudaEventRecord");
}

ZSHARD_RT_API void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream,
                                 bool isHostShared) {
  const char *entry = "mgpuMemAlloc";
  CudaDevice &device = currentCuda(entry);
  (void)stream; // the pool is ordered by the compute stream
  if (sizeBytes == 0)
    return nullptr;
  zshard_rt_mem_ctx *ctx = zshard_rt_current_mem_ctx();
  try {
    if (isHostShared)
      return device.allocate(ctx, ZSHARD_RT_MEM_ACTIVATIONS, sizeBytes,
                             BufferPlacement::Host);
  } catch (const Failure &failure) {
    stepFatal(entry, "%s", failure.what());
  }
  // The category the step set for its next allocation, as the MLIR hooks.
  return device.stepAllocate(ctx, currentStepAllocCategory(), sizeBytes, 256);
}

ZSHARD_RT_API void mgpuMemFree(void *ptr, CUstream stream) {
  const char *entry = "mgpuMemFree";
  CudaDevice &device = currentCuda(entry);
  (void)stream;
  if (!ptr)
    return;
  if (!device.stepFree(ptr))
    stepFatal(entry, "%p is not a block of %s (or was freed already)", ptr,
              device.name().c_str());
}

ZSHARD_RT_API void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                              CUstream stream) {
  const char *entry = "mgpuMemcpy";
  currentCuda(entry);
  checkRuntime(entry,
               cudaMemcpyAsync(dst, src, sizeBytes, cudaMemcpyDefault, stream),
               "cudaMemcpyAsync");
}

ZSHARD_RT_API void mgpuMemset32(void *dst, unsigned int value, size_t count,
                                CUstream stream) {
  const char *entry = "mgpuMemset32";
  currentCuda(entry);
  const DriverApi &api = driver(entry);
  checkDriver(entry, api,
              api.memsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                 count, stream),
              "cuMemsetD32Async");
}

ZSHARD_RT_API void mgpuMemset16(void *dst, unsigned short value, size_t count,
                                CUstream stream) {
  const char *entry = "mgpuMemset16";
  currentCuda(entry);
  const DriverApi &api = driver(entry);
  checkDriver(entry, api,
              api.memsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                 count, stream),
              "cuMemsetD16Async");
}

ZSHARD_RT_API void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  const char *entry = "mgpuMemHostRegister";
  currentCuda(entry);
  checkRuntime(entry, cudaHostRegister(ptr, sizeBytes, cudaHostRegisterDefault),
               "cudaHostRegister");
}

ZSHARD_RT_API void mgpuMemHostRegisterMemRef(int64_t rank,
                                             MemRefHead *descriptor,
                                             int64_t elementSizeBytes) {
  const char *entry = "mgpuMemHostRegisterMemRef";
  if (rank < 0 || !descriptor)
    stepFatal(entry, "bad memref (rank %lld)", static_cast<long long>(rank));
  // The dense extent of the memref: elements up to the last one, row-major.
  const int64_t *sizes = reinterpret_cast<const int64_t *>(descriptor + 1);
  int64_t elements = 1;
  for (int64_t i = 0; i < rank; ++i)
    elements *= sizes[i];
  char *data = descriptor->aligned + descriptor->offset * elementSizeBytes;
  mgpuMemHostRegister(data, uint64_t(elements * elementSizeBytes));
}

ZSHARD_RT_API void mgpuMemHostUnregister(void *ptr) {
  const char *entry = "mgpuMemHostUnregister";
  currentCuda(entry);
  checkRuntime(entry, cudaHostUnregister(ptr), "cudaHostUnregister");
}

ZSHARD_RT_API void mgpuMemHostUnregisterMemRef(int64_t rank,
                                               MemRefHead *descriptor,
                                               int64_t elementSizeBytes) {
  (void)rank;
  if (!descriptor)
    stepFatal("mgpuMemHostUnregisterMemRef", "the memref is NULL");
  mgpuMemHostUnregister(descriptor->aligned +
                        descriptor->offset * elementSizeBytes);
}

ZSHARD_RT_API void mgpuSetDefaultDevice(int32_t device) {
  const char *entry = "mgpuSetDefaultDevice";
  CudaDevice &current = currentCuda(entry);
  if (device != current.ordinal())
    stepFatal(entry,
              "the step asks for device %d, but this rank runs on %s (the "
              "launcher chooses the device by local rank)",
              int(device), current.name().c_str());
}

} // extern "C"
