//===- DriverApi.cpp - CUDA driver entry points through cudart ------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "cuda/DriverApi.h"

#include <cuda_runtime_api.h>

#include <mutex>

using namespace zshard::rt;

namespace {

/// The ABI version the entry points are asked for: that of CUDA 12.0, whose
/// signatures of these functions are still current.
constexpr unsigned entryPointVersion = 12000;

template <typename Fn>
bool lookUp(const char *symbol, Fn &fn, std::string &why) {
  void *pointer = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t error = cudaGetDriverEntryPointByVersion(
      symbol, &pointer, entryPointVersion, cudaEnableDefault, &found);
  if (error != cudaSuccess || found != cudaDriverEntryPointSuccess ||
      !pointer) {
    (void)cudaGetLastError();
    why = std::string("the CUDA driver does not provide ") + symbol + " (" +
          (error != cudaSuccess ? cudaGetErrorString(error)
                                : "symbol not found or version too new") +
          ")";
    return false;
  }
  fn = reinterpret_cast<Fn>(pointer);
  return true;
}

} // namespace

std::string DriverApi::errorName(CUresult result) const {
  const char *name = nullptr;
  if (getErrorName && getErrorName(result, &name) == CUDA_SUCCESS && name)
    return name;
  return "CUresult " + std::to_string(int(result));
}

const DriverApi *zshard::rt::driverApi(std::string &why) {
  static std::once_flag once;
  static DriverApi api;
  static std::string failure;
  static bool ok = false;
  std::call_once(once, [] {
    ok = lookUp("cuGetErrorName", api.getErrorName, failure) &&
         lookUp("cuModuleLoadData", api.moduleLoadData, failure) &&
         lookUp("cuModuleLoadDataEx", api.moduleLoadDataEx, failure) &&
         lookUp("cuModuleUnload", api.moduleUnload, failure) &&
         lookUp("cuModuleGetFunction", api.moduleGetFunction, failure) &&
         lookUp("cuFuncSetAttribute", api.funcSetAttribute, failure) &&
         lookUp("cuLaunchKernel", api.launchKernel, failure) &&
         lookUp("cuLaunchKernelEx", api.launchKernelEx, failure) &&
         lookUp("cuMemsetD32Async", api.memsetD32Async, failure) &&
         lookUp("cuMemsetD16Async", api.memsetD16Async, failure);
  });
  if (!ok) {
    why = failure;
    return nullptr;
  }
  return &api;
}
