//===- RankDevice.h - The device a zshard-run rank runs on ------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// --device cpu (the default) or cuda: a zshard_rt_device of the runtime
/// (zshard_rt_device_create). The CPU device allocates exactly what
/// zshard-run always allocated (zshard_rt_cpu_alloc blocks); a CUDA device is
/// chosen by local rank and holds the step's buffers in GPU memory, and the
/// rank's thread makes it current so the step's temporaries and products run
/// there too. A machine without a usable GPU fails here, with one line.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RANKDEVICE_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RANKDEVICE_H

#include "Options.h"

#include "zshard/runtime/zshard_rt.h"

#include <cstdint>

namespace zshard::run {

class RankDevice {
public:
  /// The device of \p kind for \p rank. Throws a Failure "--device cuda:
  /// <why>" when there is none.
  RankDevice(DeviceKind kind, int32_t rank);
  ~RankDevice();
  RankDevice(const RankDevice &) = delete;
  RankDevice &operator=(const RankDevice &) = delete;

  zshard_rt_device *get() const { return device; }
  /// Whether the step's buffers are GPU memory (the host stages data,
  /// state and losses).
  bool onGpu() const { return kind == DeviceKind::Cuda; }

private:
  DeviceKind kind;
  zshard_rt_device *device = nullptr;
};

/// Makes \p device the calling thread's current device for the scope.
class CurrentDevice {
public:
  explicit CurrentDevice(zshard_rt_device *device) {
    zshard_rt_set_current_device(device);
  }
  ~CurrentDevice() { zshard_rt_set_current_device(nullptr); }
  CurrentDevice(const CurrentDevice &) = delete;
  CurrentDevice &operator=(const CurrentDevice &) = delete;
};

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RANKDEVICE_H
