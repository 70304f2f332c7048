//===- CudaStatus.h - CUDA errors as runtime statuses -----------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Maps CUDA runtime errors to zshard_rt_status. Errors that mean "there is
/// no usable driver or device here" become ZSHARD_RT_ERROR_UNAVAILABLE, so a
/// machine without a GPU is told apart from a GPU that fails.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CUDA_CUDASTATUS_H
#define ZSHARD_RUNTIME_LIB_CUDA_CUDASTATUS_H

#include "zshard/runtime/zshard_rt.h"

#include <cuda_runtime_api.h>

namespace zshard::rt {

/// Whether \p error says that no driver or no device is usable.
bool isCudaUnavailable(cudaError_t error);

/// Sets the last error to "<entry>: <call> failed: <name>: <description>"
/// and returns UNAVAILABLE, OUT_OF_MEMORY or DEVICE as \p error says. Clears
/// CUDA's own last error so later calls start clean.
zshard_rt_status cudaFailure(const char *entry, const char *call,
                             cudaError_t error);

/// Writes the device count to \p *count (0 on failure) and fails with
/// ZSHARD_RT_ERROR_UNAVAILABLE, on behalf of \p entry, when it is 0.
zshard_rt_status countCudaDevices(const char *entry, int *count);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CUDA_CUDASTATUS_H
