//===- CpuDevice.h - Step buffers in host memory ----------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The host as a device: both placements are zshard_rt_cpu_alloc blocks
/// (64-byte aligned; BufferPlacement::Host charged to
/// ZSHARD_RT_MEM_HOST_OFFLOAD), copies are memcpy and synchronize() has nothing
/// to wait for.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_DEVICE_CPUDEVICE_H
#define ZSHARD_RUNTIME_LIB_DEVICE_CPUDEVICE_H

#include "device/Device.h"

namespace zshard::rt {

class CpuDevice final : public Device {
public:
  CpuDevice() = default;

  zshard_rt_device_kind kind() const override { return ZSHARD_RT_DEVICE_CPU; }
  const std::string &name() const override { return deviceName; }

  void *allocate(zshard_rt_mem_ctx *ctx, zshard_rt_mem_category category,
                 uint64_t bytes, BufferPlacement placement) override;
  void free(void *ptr) override;
  void copyToDevice(void *dst, const void *src, uint64_t bytes) override;
  void copyToHost(void *dst, const void *src, uint64_t bytes) override;
  void memsetZero(void *ptr, uint64_t bytes) override;
  void synchronize() override {}

private:
  std::string deviceName = "cpu";
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_DEVICE_CPUDEVICE_H
