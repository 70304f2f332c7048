//===- CurrentDevice.h - The device of a thread's compiled step -*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The device that serves the compiled step's allocations and products on
/// the calling thread, set through zshard_rt_set_current_device(). A host
/// (CPU) device, or none, is nullptr here: the step entries then take their
/// CPU paths, exactly as in a build without devices.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_DEVICE_CURRENTDEVICE_H
#define ZSHARD_RUNTIME_LIB_DEVICE_CURRENTDEVICE_H

#include "zshard/runtime/zshard_rt.h"

namespace zshard::rt {

class Device;

/// The calling thread's current non-host device, or nullptr.
Device *currentStepDevice();

/// The category the calling thread's next step allocation is charged to
/// (zshard_rt_step_set_alloc_category; step/MemrefAlloc.cpp).
zshard_rt_mem_category currentStepAllocCategory();

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_DEVICE_CURRENTDEVICE_H
