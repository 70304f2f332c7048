//===- Fatal.h - Failing entries of the compiled-step ABI -------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The entries compiled steps call return nothing, and the generated code could
/// not handle an error anyway. A request they cannot honour ends the process
/// with one line on stderr that names the entry and the problem.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_FATAL_H
#define ZSHARD_RUNTIME_LIB_STEP_FATAL_H

namespace zshard::rt {

/// Prints "zshard runtime: fatal: <entry>: <message>" to stderr and aborts.
[[noreturn]] void stepFatal(const char *entry, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_FATAL_H
