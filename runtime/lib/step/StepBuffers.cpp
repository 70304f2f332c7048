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
  case ArgRole::Buffer:
    return ZSHARD_RT_MEM_BUFFERS;
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

zshard_rt_mem_category zshard::rt::categoryOf(const ArgumentDesc &arg) {
  if (arg.placement == Placement::Host)
    return ZSHARD_RT_MEM_HOST_OFFLOAD;
  return categoryOf(arg.role);
}

StepBuffers::StepBuffers(const Manifest &manifest, zshard_rt_mem_ctx *ctx,
                         zshard_rt_device *device)
    : manifest(manifest), ctx(ctx), device(device),
      numArguments(manifest.arguments.size()) {
  auto allocate = [&](zshard_rt_mem_category category, uint64_t bytes,
                      const std::string &what) {
    void *ptr = nullptr;
    zshard_rt_placement placement = category == ZSHARD_RT_MEM_HOST_OFFLOAD
                                        ? ZSHARD_RT_PLACEMENT_HOST
                                        : ZSHARD_RT_PLACEMENT_DEVICE;
    zshard_rt_status status =
        device ? zshard_rt_device_alloc(device, ctx, category, bytes, placement,
                                        &ptr)
               : zshard_rt_cpu_alloc(ctx, category, bytes, 0, &ptr);
    if (status == ZSHARD_RT_OK && device)
      status = zshard_rt_device_memset_zero(device, ptr, bytes);
    else if (status == ZSHARD_RT_OK)
      std::memset(ptr, 0, bytes);
    if (status != ZSHARD_RT_OK) {
      std::string message = zshard_rt_last_error_message();
      if (ptr)
        buffers.push_back(ptr);
      freeAll();
      fail(what + ": " + message);
    }
    buffers.push_back(ptr);
  };
  buffers.reserve(manifest.arguments.size() + manifest.results.size());
  for (const ArgumentDesc &arg : manifest.arguments)
    allocate(categoryOf(arg), arg.type.bytes,
             std::string(roleName(arg.role)) + " '" + arg.name + "'");
  for (const ResultDesc &result : manifest.results) {
    if (result.inPlace) {
      buffers.push_back(buffers[size_t(result.argument)]);
      continue;
    }
    zshard_rt_mem_category category =
        result.argument >= 0
            ? categoryOf(manifest.arguments[size_t(result.argument)])
            : categoryOf(result.role);
    allocate(category, result.type.bytes,
             std::string(roleName(result.role)) + " '" + result.name + "'");
  }
}

StepBuffers::~StepBuffers() { freeAll(); }

void StepBuffers::freeAll() {
  for (size_t i = 0; i < buffers.size(); ++i) {
    bool shared =
        i >= numArguments && manifest.results[i - numArguments].inPlace;
    if (!shared && device)
      zshard_rt_device_free(device, buffers[i]);
    else if (!shared)
      zshard_rt_cpu_free(ctx, buffers[i]);
  }
  buffers.clear();
}

void StepBuffers::swapUpdated() {
  for (size_t j = 0; j < manifest.results.size(); ++j) {
    int64_t arg = manifest.results[j].argument;
    if (arg >= 0 && !manifest.results[j].inPlace)
      std::swap(buffers[size_t(arg)], buffers[numArguments + j]);
  }
}
