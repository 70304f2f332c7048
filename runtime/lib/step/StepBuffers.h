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
/// Results never alias arguments. After a step, swapUpdated() exchanges each
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
  /// Allocates every buffer of \p manifest in \p ctx. Throws a Failure when
  /// memory runs out.
  StepBuffers(const Manifest &manifest, zshard_rt_mem_ctx *ctx);
  ~StepBuffers();
  StepBuffers(const StepBuffers &) = delete;
  StepBuffers &operator=(const StepBuffers &) = delete;

  /// The buffer array to pass to the step: arguments, then results.
  void **pointers() { return buffers.data(); }
  void *argument(size_t index) { return buffers[index]; }
  const void *argument(size_t index) const { return buffers[index]; }
  void *result(size_t index) { return buffers[numArguments + index]; }
  const void *result(size_t index) const {
    return buffers[numArguments + index];
  }

  /// Exchanges every state argument with its update result.
  void swapUpdated();

private:
  void freeAll();

  const Manifest &manifest;
  zshard_rt_mem_ctx *ctx;
  size_t numArguments;
  std::vector<void *> buffers;
};

/// The memory category of argument role \p role.
zshard_rt_mem_category categoryOf(ArgRole role);
/// The memory category of result role \p role.
zshard_rt_mem_category categoryOf(ResultRole role);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_STEPBUFFERS_H
