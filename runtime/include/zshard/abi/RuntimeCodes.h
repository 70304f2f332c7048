/*===- RuntimeCodes.h - codes the runtime's step entries take ----*- C -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The integer codes that compiled steps pass to the runtime's C entries
/// (zshard_rt.h): memory categories (zshard_rt_step_set_alloc_category),
/// element types and reductions of collectives (zshard_rt_step_all_gather,
/// ...) and BLAS transposes (zshard_rt_step_sgemm). The compiler emits these
/// numbers and the runtime reads them, so they are defined here once, in
/// plain C (C99 and later, and C++), with no other dependency; zshard_rt.h
/// includes this file.
///
//===----------------------------------------------------------------------===*/

#ifndef ZSHARD_ABI_RUNTIMECODES_H
#define ZSHARD_ABI_RUNTIMECODES_H

/// What a block of memory holds. The categories follow the FSDP/ZeRO memory
/// table: parameters, gradients and optimizer state are what sharding divides.
/// ZSHARD_RT_MEM_HOST_OFFLOAD is the host pool: state the plan offloaded to
/// host memory (pinned on CUDA). It is accounted in the same context but is
/// not device memory, so the totals (zshard_rt_mem_total_live_bytes(),
/// zshard_rt_mem_total_peak_bytes()) leave it out.
typedef enum zshard_rt_mem_category {
  ZSHARD_RT_MEM_PARAMETERS = 0,
  ZSHARD_RT_MEM_GRADIENTS = 1,
  ZSHARD_RT_MEM_OPTIMIZER_STATE = 2,
  ZSHARD_RT_MEM_ACTIVATIONS = 3,
  ZSHARD_RT_MEM_COMMUNICATION = 4, ///< Gathered units, collective buffers.
  ZSHARD_RT_MEM_OTHER = 5,
  ZSHARD_RT_MEM_HOST_OFFLOAD = 6,  ///< Offloaded state in the host pool.
  ZSHARD_RT_MEM_BUFFERS = 7, ///< Non-trained state (buffer arguments).
  ZSHARD_RT_MEM_NUM_CATEGORIES = 8 ///< Number of categories, not a category.
} zshard_rt_mem_category;

/// Whether a matrix operand is used as stored or transposed.
typedef enum zshard_rt_transpose {
  ZSHARD_RT_NO_TRANS = 0,
  ZSHARD_RT_TRANS = 1
} zshard_rt_transpose;

/// Element type of a collective buffer (the dtype argument of the step
/// collectives).
typedef enum zshard_rt_comm_dtype {
  ZSHARD_RT_COMM_F32 = 0,
  ZSHARD_RT_COMM_BF16 = 1, ///< Reduced in f32, rounded to nearest even.
  ZSHARD_RT_COMM_F16 = 2,  ///< Reduced in f32, rounded to nearest even.
  ZSHARD_RT_COMM_I32 = 3   ///< sum (wrapping) and max only.
} zshard_rt_comm_dtype;

/// Reduction of a collective (the op argument of the step collectives).
typedef enum zshard_rt_reduce_op {
  ZSHARD_RT_REDUCE_SUM = 0,
  ZSHARD_RT_REDUCE_AVG = 1, ///< Sum / group size in f32; not for i32.
  ZSHARD_RT_REDUCE_MAX = 2  ///< Ties keep the lower rank's value; NaN wins.
} zshard_rt_reduce_op;

#endif /* ZSHARD_ABI_RUNTIMECODES_H */
