//===- Device.cpp - Where a rank's step buffers live ----------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "device/Device.h"

#include "step/Fatal.h"

using namespace zshard::rt;

zshard_rt_mem_category
zshard::rt::chargedCategory(zshard_rt_mem_category category,
                            BufferPlacement placement) {
  return placement == BufferPlacement::Host ? ZSHARD_RT_MEM_HOST_OFFLOAD
                                            : category;
}

Device::~Device() = default;

void *Device::stepAllocate(zshard_rt_mem_ctx *, zshard_rt_mem_category,
                           uint64_t, uint64_t) {
  stepFatal("_mlir_memref_to_llvm_alloc",
            "device %s does not serve compiled-step allocations",
            name().c_str());
}

bool Device::stepFree(void *) { return false; }

void Device::stepSgemm(const StepGemmShape &, const float *, int64_t,
                       const float *, int64_t, float *, int64_t) {
  stepFatal("zshard_rt_step_sgemm",
            "device %s does not run compiled-step products", name().c_str());
}

void Device::stepGemmBf16(const StepGemmShape &, const uint16_t *, int64_t,
                          const uint16_t *, int64_t, float *, int64_t) {
  stepFatal("zshard_rt_step_gemm_bf16",
            "device %s does not run compiled-step products", name().c_str());
}

void Device::stepAttentionForward(const StepAttentionShape &, const float *,
                                  const float *, const float *, float *,
                                  float *) {
  stepFatal("zshard_rt_step_attention_fwd",
            "device %s does not run compiled-step attention", name().c_str());
}

void Device::stepAttentionBackward(const StepAttentionShape &, const float *,
                                   const float *, const float *, const float *,
                                   const float *, const float *, float *,
                                   float *, float *) {
  stepFatal("zshard_rt_step_attention_bwd",
            "device %s does not run compiled-step attention", name().c_str());
}
