//===- CommTypes.h - Element types and reductions ---------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What a collective moves and how it combines: the element types (f32, bf16,
/// f16, i32) and reductions (sum, avg, max) of the communication layer. The
/// numeric values are those of zshard_rt_comm_dtype and zshard_rt_reduce_op
/// in the C ABI.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_COMMTYPES_H
#define ZSHARD_RUNTIME_LIB_COMM_COMMTYPES_H

#include <cstddef>
#include <cstdint>

namespace zshard::rt {

/// Element type of a collective (values of zshard_rt_comm_dtype).
enum class CommDType : int32_t { F32 = 0, BF16 = 1, F16 = 2, I32 = 3 };

/// Reduction of a collective (values of zshard_rt_reduce_op).
enum class ReduceOp : int32_t { Sum = 0, Avg = 1, Max = 2 };

/// Whether \p code names a CommDType.
bool isCommDType(int32_t code);
/// Whether \p code names a ReduceOp.
bool isReduceOp(int32_t code);

/// "f32", "bf16", "f16", "i32".
const char *commDTypeName(CommDType dtype);
/// "sum", "avg", "max".
const char *reduceOpName(ReduceOp op);

/// Bytes per element.
size_t commDTypeSize(CommDType dtype);

/// Whether \p op is defined for \p dtype: everything but avg on i32.
bool supportsReduction(CommDType dtype, ReduceOp op);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_COMMTYPES_H
