//===- DeviceAbi.cpp - C ABI of devices and the current device ------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard_rt_device is a thin owner of a Device (device/Device.h). Failures of
// the C++ layer become statuses: a DeviceFailure carries its own, any other
// Failure is ZSHARD_RT_ERROR_DEVICE.
//
//===----------------------------------------------------------------------===//

#include "device/CpuDevice.h"
#include "device/CurrentDevice.h"
#include "device/Device.h"
#include "device/DeviceHandle.h"

#include "core/Error.h"
#include "core/Failure.h"
#include "step/Fatal.h"

#include <memory>
#include <new>
#include <string>

using namespace zshard::rt;

namespace {

/// The device zshard_rt_set_current_device() set on this thread.
thread_local zshard_rt_device *currentDevice = nullptr;
/// The same when it is not the host's: what the step entries use.
thread_local Device *currentNonHost = nullptr;

/// Runs \p body, turning what it throws into a status for \p entry.
template <typename Body>
zshard_rt_status guarded(const char *entry, Body body) {
  try {
    body();
    return ZSHARD_RT_OK;
  } catch (const std::bad_alloc &) {
    return setError(ZSHARD_RT_ERROR_OUT_OF_MEMORY,
                    std::string(entry) + ": out of host memory");
  } catch (const DeviceFailure &failure) {
    return setError(failure.status, std::string(entry) + ": " + failure.what());
  } catch (const Failure &failure) {
    return setError(ZSHARD_RT_ERROR_DEVICE,
                    std::string(entry) + ": " + failure.what());
  }
}

bool isPlacement(zshard_rt_placement placement) {
  return placement == ZSHARD_RT_PLACEMENT_DEVICE ||
         placement == ZSHARD_RT_PLACEMENT_HOST;
}

} // namespace

Device *zshard::rt::currentStepDevice() { return currentNonHost; }

extern "C" zshard_rt_status zshard_rt_device_create(zshard_rt_device_kind kind,
                                                    int32_t rank,
                                                    zshard_rt_device **out) {
  const char *entry = "zshard_rt_device_create";
  if (!out)
    return nullArgument(entry, "out");
  *out = nullptr;
  if (kind != ZSHARD_RT_DEVICE_CPU && kind != ZSHARD_RT_DEVICE_CUDA)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": " +
                        std::to_string(static_cast<int>(kind)) +
                        " is not a device kind (0 cpu, 1 cuda)");
  if (rank < 0)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": rank " + std::to_string(rank) +
                        " is negative");
  return guarded(entry, [&] {
    auto handle = std::make_unique<zshard_rt_device>();
    if (kind == ZSHARD_RT_DEVICE_CPU)
      handle->device = std::make_unique<CpuDevice>();
    else
      handle->device = makeCudaDevice(rank);
    *out = handle.release();
  });
}

extern "C" void zshard_rt_device_destroy(zshard_rt_device *device) {
  if (!device)
    return;
  if (currentDevice == device) {
    currentDevice = nullptr;
    currentNonHost = nullptr;
  }
  delete device;
}

extern "C" zshard_rt_device_kind
zshard_rt_device_get_kind(const zshard_rt_device *device) {
  return device ? device->device->kind() : ZSHARD_RT_DEVICE_CPU;
}

extern "C" const char *zshard_rt_device_name(const zshard_rt_device *device) {
  return device ? device->device->name().c_str() : "cpu";
}

extern "C" zshard_rt_status
zshard_rt_device_alloc(zshard_rt_device *device, zshard_rt_mem_ctx *ctx,
                       zshard_rt_mem_category category, uint64_t bytes,
                       zshard_rt_placement placement, void **out) {
  const char *entry = "zshard_rt_device_alloc";
  if (!out)
    return nullArgument(entry, "out");
  *out = nullptr;
  if (!device)
    return nullArgument(entry, "device");
  if (!ctx)
    return nullArgument(entry, "ctx");
  if (category < 0 || category >= ZSHARD_RT_MEM_NUM_CATEGORIES)
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": " +
                        std::to_string(static_cast<int>(category)) +
                        " is not a memory category");
  if (!isPlacement(placement))
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": " +
                        std::to_string(static_cast<int>(placement)) +
                        " is not a placement (0 device, 1 host)");
  return guarded(entry, [&] {
    *out = device->device->allocate(ctx, category, bytes,
                                    placement == ZSHARD_RT_PLACEMENT_HOST
                                        ? BufferPlacement::Host
                                        : BufferPlacement::Device);
  });
}

extern "C" zshard_rt_status zshard_rt_device_free(zshard_rt_device *device,
                                                  void *ptr) {
  const char *entry = "zshard_rt_device_free";
  if (!device)
    return nullArgument(entry, "device");
  return guarded(entry, [&] { device->device->free(ptr); });
}

extern "C" zshard_rt_status
zshard_rt_device_copy_to_device(zshard_rt_device *device, void *dst,
                                const void *src, uint64_t bytes) {
  const char *entry = "zshard_rt_device_copy_to_device";
  if (!device)
    return nullArgument(entry, "device");
  if (bytes && (!dst || !src))
    return nullArgument(entry, !dst ? "dst" : "src");
  return guarded(entry, [&] { device->device->copyToDevice(dst, src, bytes); });
}

extern "C" zshard_rt_status
zshard_rt_device_copy_to_host(zshard_rt_device *device, void *dst,
                              const void *src, uint64_t bytes) {
  const char *entry = "zshard_rt_device_copy_to_host";
  if (!device)
    return nullArgument(entry, "device");
  if (bytes && (!dst || !src))
    return nullArgument(entry, !dst ? "dst" : "src");
  return guarded(entry, [&] { device->device->copyToHost(dst, src, bytes); });
}

extern "C" zshard_rt_status
zshard_rt_device_memset_zero(zshard_rt_device *device, void *ptr,
                             uint64_t bytes) {
  const char *entry = "zshard_rt_device_memset_zero";
  if (!device)
    return nullArgument(entry, "device");
  if (bytes && !ptr)
    return nullArgument(entry, "ptr");
  return guarded(entry, [&] { device->device->memsetZero(ptr, bytes); });
}

extern "C" zshard_rt_status
zshard_rt_device_synchronize(zshard_rt_device *device) {
  const char *entry = "zshard_rt_device_synchronize";
  if (!device)
    return nullArgument(entry, "device");
  return guarded(entry, [&] { device->device->synchronize(); });
}

extern "C" void zshard_rt_set_current_device(zshard_rt_device *device) {
  currentDevice = device;
  currentNonHost = device && device->device->kind() != ZSHARD_RT_DEVICE_CPU
                       ? device->device.get()
                       : nullptr;
  if (currentNonHost) {
    try {
      currentNonHost->makeCurrent();
    } catch (const Failure &failure) {
      stepFatal("zshard_rt_set_current_device", "%s", failure.what());
    }
  }
}

extern "C" zshard_rt_device *zshard_rt_current_device(void) {
  return currentDevice;
}
