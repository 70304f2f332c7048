//===- LocalRank.h - Which GPU of a machine a rank uses ---------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A rank uses the GPU of its local rank (its index among the ranks of its
/// machine): ZSHARD_LOCAL_RANK when set, else OMPI_COMM_WORLD_LOCAL_RANK
/// (Open MPI's mpirun sets it), else the rank modulo the device count (one
/// machine, ranks started by hand). A local rank from the environment at or
/// above the device count is an error: two ranks would share a GPU.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_DEVICE_LOCALRANK_H
#define ZSHARD_RUNTIME_LIB_DEVICE_LOCALRANK_H

#include <cstdint>
#include <string>

namespace zshard::rt {

/// The device ordinal of \p rank on a machine with \p deviceCount (>= 1)
/// devices, or -1 with \p error set to one line saying why.
int localDeviceOrdinal(int32_t rank, int deviceCount, std::string &error);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_DEVICE_LOCALRANK_H
