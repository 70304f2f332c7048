//===- DriverApi.h - CUDA driver entry points through cudart ----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The few CUDA driver API functions the runtime calls (modules, kernel
/// launches, 16- and 32-bit memsets), taken from the CUDA runtime with
/// cudaGetDriverEntryPointByVersion instead of linking libcuda.so.1.
/// libzshard_rt.so therefore loads on machines without an NVIDIA driver
/// (every CPU-only run and test) and says "no driver" there instead of
/// failing to load. Handles are shared with the runtime API: CUstream is
/// cudaStream_t, CUevent is cudaEvent_t, and the driver calls run in the
/// primary context cudaSetDevice makes current.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CUDA_DRIVERAPI_H
#define ZSHARD_RUNTIME_LIB_CUDA_DRIVERAPI_H

#include <cuda.h>

#include <string>

namespace zshard::rt {

struct DriverApi {
  CUresult(CUDAAPI *getErrorName)(CUresult, const char **) = nullptr;
  CUresult(CUDAAPI *moduleLoadData)(CUmodule *, const void *) = nullptr;
  CUresult(CUDAAPI *moduleLoadDataEx)(CUmodule *, const void *, unsigned int,
                                      CUjit_option *, void **) = nullptr;
  CUresult(CUDAAPI *moduleUnload)(CUmodule) = nullptr;
  CUresult(CUDAAPI *moduleGetFunction)(CUfunction *, CUmodule,
                                       const char *) = nullptr;
  CUresult(CUDAAPI *funcSetAttribute)(CUfunction, CUfunction_attribute,
                                      int) = nullptr;
  CUresult(CUDAAPI *launchKernel)(CUfunction, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, unsigned, unsigned,
                                  CUstream, void **, void **) = nullptr;
  CUresult(CUDAAPI *launchKernelEx)(const CUlaunchConfig *, CUfunction, void **,
                                    void **) = nullptr;
  CUresult(CUDAAPI *memsetD32Async)(CUdeviceptr, unsigned int, size_t,
                                    CUstream) = nullptr;
  CUresult(CUDAAPI *memsetD16Async)(CUdeviceptr, unsigned short, size_t,
                                    CUstream) = nullptr;

  /// "CUDA_ERROR_...", or the number when the driver has no name for it.
  std::string errorName(CUresult result) const;
};

/// The driver's entry points, looked up on first use; NULL with \p why set
/// when the CUDA runtime cannot provide one (no driver, a driver too old).
const DriverApi *driverApi(std::string &why);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CUDA_DRIVERAPI_H
