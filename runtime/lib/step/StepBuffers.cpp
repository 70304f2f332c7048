//===- StepBuffers.cpp - The buffers a compiled step reads and writes -----===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/StepBuffers.h"

#include "core/Failure.h"

#include <cstring>
#include <utility>

using namespace zshard::rt;

zshard_rt_mem_category zshard::rt::categoryOf(ArgRole role) {
  switch (role) {
  case ArgRole::Param:
  case ArgRole::ParamShard:
    return ZSHARD_RT_MEM_PARAMETERS;
  case ArgRole::OptState:
  case ArgRole::OptStateShard:
    return ZSHARD_RT_MEM_OPTIMIZER_STATE;
  case ArgRole::Batch:
    return ZSHARD_RT_MEM_ACTIVATIONS;
  case ArgRole::Hyper:
    return ZSHARD_RT_MEM_OTHER;
  }
  return ZSHARD_RT_MEM_OTHER;
}

zshard_rt_mem_category zshard::rt::categoryOf(ResultRole role) {
  switch (role) {
  case ResultRole::ParamOut:
  case ResultRole::ParamShardOut:
    return ZSHARD_RT_MEM_PARAMETERS;
  case ResultRole::OptStateOut:
  case ResultRole::OptStateShardOut:
    return ZSHARD_RT_MEM_OPTIMIZER_STATE;
  case ResultRole::Loss:
    return ZSHARD_RT_MEM_OTHER;
  }
  return ZSHARD_RT_MEM_OTHER;
}

StepBuffers::StepBuffers(const Manifest &manifest, zshard_rt_mem_ctx *ctx)
    : manifest(manifest), ctx(ctx), numArguments(manifest.arguments.size()) {
  auto allocate = [&](zshard_rt_mem_category category, uint64_t bytes,
                      const std::string &what) {
    void *ptr = nullptr;
    if (zshard_rt_cpu_alloc(ctx, category, bytes, 0, &ptr) != ZSHARD_RT_OK) {
      std::string message = zshard_rt_last_error_message();
      freeAll();
      fail(what + ": " + message);
    }
    std::memset(ptr, 0, bytes);
    buffers.push_back(ptr);
  };
  buffers.reserve(manifest.arguments.size() + manifest.results.size());
  for (const ArgumentDesc &arg : manifest.arguments)
    allocate(categoryOf(arg.role), arg.type.bytes,
             std::string(roleName(arg.role)) + " '" + arg.name + "'");
  for (const ResultDesc &result : manifest.results)
    allocate(categoryOf(result.role), result.type.bytes,
             std::string(roleName(result.role)) + " '" + result.name + "'");
}

StepBuffers::~StepBuffers() { freeAll(); }

void StepBuffers::freeAll() {
  for (void *ptr : buffers)
    zshard_rt_cpu_free(ctx, ptr);
  buffers.clear();
}

void StepBuffers::swapUpdated() {
  for (size_t j = 0; j < manifest.results.size(); ++j) {
    int64_t arg = manifest.results[j].argument;
    if (arg >= 0)
      std::swap(buffers[size_t(arg)], buffers[numArguments + j]);
  }
}
