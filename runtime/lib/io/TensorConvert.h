//===- TensorConvert.h - Reading tensors as another dtype -------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What a stored tensor may be read as, without ever changing a value:
///  - the same dtype: the bytes;
///  - a float type from a narrower or equal float type (BF16 or F16 to f32 or
///    f64, F32 to f64): exact widening, as zshard_ref widens BF16;
///  - an integer (or i1) type from any integer (or BOOL) type: each value is
///    checked to fit (zshard_ref accepts any integer dtype for tokens).
/// Everything else (narrowing a float, floats as integers, integers as
/// floats) is refused.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_IO_TENSORCONVERT_H
#define ZSHARD_RUNTIME_LIB_IO_TENSORCONVERT_H

#include "core/DType.h"

#include <cstdint>
#include <string>

namespace zshard::rt {

/// Whether elements of \p from may be read as \p to (see above).
bool canReadAs(DType from, DType to);

/// Converts \p count elements of \p from at \p src into \p to at \p dst.
/// canReadAs(from, to) must hold. An integer that does not fit \p to throws a
/// Failure "<what>: element <i> = <v> does not fit <to>".
void readAs(DType from, const void *src, uint64_t count, DType to, void *dst,
            const std::string &what);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_IO_TENSORCONVERT_H
