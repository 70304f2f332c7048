//===- DeviceHandle.h - The C ABI's device handle ---------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the opaque zshard_rt_device of zshard_rt.h is: a thin owner of a
/// Device, which other parts of the library (the NCCL communicator) reach.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_DEVICE_DEVICEHANDLE_H
#define ZSHARD_RUNTIME_LIB_DEVICE_DEVICEHANDLE_H

#include "device/Device.h"

#include <memory>

struct zshard_rt_device {
  std::unique_ptr<zshard::rt::Device> device;
};

#endif // ZSHARD_RUNTIME_LIB_DEVICE_DEVICEHANDLE_H
