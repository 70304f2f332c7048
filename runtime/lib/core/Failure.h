//===- Failure.h - Errors of the host-side runtime library ------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The host-side library (artifacts, checkpoints, data, initialisation) that
/// zshard-run and the tests link statically reports a bad input by throwing a
/// Failure whose message is one line naming the file or object and the
/// problem, e.g. "run/tokens.bin: 3 bytes is not a multiple of 2 (u16)".
/// The C ABI of zshard_rt.h never throws; this is for C++ callers only.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CORE_FAILURE_H
#define ZSHARD_RUNTIME_LIB_CORE_FAILURE_H

#include <stdexcept>
#include <string>

namespace zshard::rt {

/// A bad input or environment, described for a person in one line.
class Failure : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Throws a Failure with \p message.
[[noreturn]] inline void fail(const std::string &message) {
  throw Failure(message);
}

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CORE_FAILURE_H
