//===- Alloc.h - Internals of the accounted host allocation -----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the rest of the runtime may ask about a block of zshard_rt_cpu_alloc()
/// beyond the C ABI: the context it was charged to, so that a free through the
/// MLIR hooks credits that context whichever one is current.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CPU_ALLOC_H
#define ZSHARD_RUNTIME_LIB_CPU_ALLOC_H

#include "zshard/runtime/zshard_rt.h"

namespace zshard::rt {

/// Returns the context the live block \p ptr was allocated with, or NULL when
/// \p ptr does not carry a live block header.
zshard_rt_mem_ctx *cpuBlockContext(const void *ptr);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CPU_ALLOC_H
