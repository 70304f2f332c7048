//===- StepBuffers.h - Buffers a compiled step reads, writes ----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One buffer per argument and per result of a step, 64-byte aligned, zeroed,
/// and charged to a memory context by what it holds:
///
///   param(_shard), param(_shard)_out          parameters
///   opt_state(_shard), opt_state(_shard)_out  optimizer_state
///   batch                       activations
///   hyper, loss                 other
///
/// Optimizer state the manifest places in host memory ("placement": "host")
/// is charged to host_offload instead, and so is a result updating it.
///
/// A result the manifest marks "in_place" is its argument's buffer: the step
/// writes the update there, and the runtime allocates nothing for it. Other
/// results never alias arguments: after a step, swapUpdated() exchanges each
/// state argument (param, opt_state and their shards) with its update result
/// (double buffering), so the next step reads what this one wrote without a
/// copy.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_STEPBUFFERS_H
#define ZSHARD_RUNTIME_LIB_STEP_STEPBUFFERS_H

#include "step/Manifest.h"

#include "zshard/runtime/zshard_rt.h"

#include <vector>

namespace zshard::rt {

class StepBuffers {
public:
  /// Allocates every buffer of \p manifest in \p ctx: on \p device when
  /// given (host-placed optimizer state in its host memory), else in host
  /// memory. Throws a Failure when memory runs out.
  StepBuffers(const Manifest &manifest, zshard_rt_mem_ctx *ctx,
              zshard_rt_device *device = nullptr);
  ~StepBuffers();
  StepBuffers(const StepBuffers &) = delete;
  StepBuffers &operator=(const StepBuffers &) = delete;

  /// The buffer array to pass to the step: arguments, then results. An
  /// in-place result's entry is its argument's buffer.
  void **pointers() { return buffers.data(); }
  void *argument(size_t index) { return buffers[index]; }
  const void *argument(size_t index) const { return buffers[index]; }
  void *result(size_t index) { return buffers[numArguments + index]; }
  const void *result(size_t index) const {
    return buffers[numArguments + index];
  }

  /// Exchanges every state argument with its update result (an in-place
  /// result shares its argument's buffer and stays).
  void swapUpdated();

private:
  void freeAll();

  const Manifest &manifest;
  zshard_rt_mem_ctx *ctx;
  zshard_rt_device *device;
  size_t numArguments;
  std::vector<void *> buffers;
};

/// The memory category of argument role \p role.
zshard_rt_mem_category categoryOf(ArgRole role);
/// The category of an argument's buffer: by role, or the host pool when the
/// manifest places it there.
zshard_rt_mem_category categoryOf(const ArgumentDesc &arg);
/// The memory category of result role \p role.
zshard_rt_mem_category categoryOf(ResultRole role);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_STEPBUFFERS_H
