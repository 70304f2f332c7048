//===- Error.h - Thread-local error reporting -------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// How runtime entries fail: every failure goes through setError(), which
/// stores the calling thread's last error message and returns the status, so
/// an entry can write `return setError(status, "...")`.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CORE_ERROR_H
#define ZSHARD_RUNTIME_LIB_CORE_ERROR_H

#include "zshard/runtime/zshard_rt.h"

#include <string>

namespace zshard::rt {

/// Stores \p message as the calling thread's last error and returns \p status.
zshard_rt_status setError(zshard_rt_status status, std::string message);

/// Shorthand for a ZSHARD_RT_ERROR_INVALID_ARGUMENT about a NULL argument:
/// "<entry>: <argument> is NULL".
zshard_rt_status nullArgument(const char *entry, const char *argument);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CORE_ERROR_H
