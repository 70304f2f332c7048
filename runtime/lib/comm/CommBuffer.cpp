//===- CommBuffer.cpp - Scratch memory of a collective --------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/CommBuffer.h"

#include "core/Failure.h"

#include <string>

using namespace zshard::rt;

CommBuffer::CommBuffer(zshard_rt_mem_ctx *memCtx, uint64_t bytes)
    : ctx(memCtx ? memCtx : zshard_rt_default_mem_ctx()) {
  if (zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_COMMUNICATION, bytes, 0, &block) !=
      ZSHARD_RT_OK)
    fail(std::string("collective scratch buffer: ") +
         zshard_rt_last_error_message());
}

CommBuffer::~CommBuffer() { zshard_rt_cpu_free(ctx, block); }
