//===- CommBuffer.h - Scratch memory of a collective ------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The buffers a backend allocates for itself while a collective runs (the
/// staging area of an in-place reduce-scatter, what MPI_Alltoall receives) are
/// zshard_rt_cpu_alloc blocks charged to ZSHARD_RT_MEM_COMMUNICATION of the
/// memory context that was current on the thread that started the collective.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_COMMBUFFER_H
#define ZSHARD_RUNTIME_LIB_COMM_COMMBUFFER_H

#include "zshard/runtime/zshard_rt.h"

#include <cstdint>

namespace zshard::rt {

class CommBuffer {
public:
  /// Allocates \p bytes in \p ctx (the default context when NULL); throws a
  /// Failure when that fails.
  CommBuffer(zshard_rt_mem_ctx *ctx, uint64_t bytes);
  ~CommBuffer();
  CommBuffer(const CommBuffer &) = delete;
  CommBuffer &operator=(const CommBuffer &) = delete;

  void *data() const { return block; }

private:
  zshard_rt_mem_ctx *ctx;
  void *block = nullptr;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_COMMBUFFER_H
