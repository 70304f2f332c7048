//===- CollectiveTimeout.h - How long a collective may wait -----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The collective timeout every backend honours: a collective that has waited
/// ZSHARD_COLLECTIVE_TIMEOUT_S seconds (default 600) for its peers means a
/// rank failed or is stuck, and the run ends with one line on stderr and exit
/// status 70 instead of hanging. The local backend ends the process
/// (comm/local/Barrier.cpp); the MPI backend aborts the job
/// (comm/mpi/MpiCommunicator.cpp).
///
/// Header-only, so both backends share one parser without another source
/// file in the build.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_COLLECTIVETIMEOUT_H
#define ZSHARD_RUNTIME_LIB_COMM_COLLECTIVETIMEOUT_H

#include <cstdio>
#include <cstdlib>

namespace zshard::rt {

/// The exit status of a run ended by the collective timeout (or by a bad
/// ZSHARD_COLLECTIVE_TIMEOUT_S).
inline constexpr int kCollectiveTimeoutExitStatus = 70;

/// The collective timeout in seconds: ZSHARD_COLLECTIVE_TIMEOUT_S, or 600 when
/// unset or empty. A value that is not a positive number ends the process
/// with one line and status 70 (a typo must not silently mean "forever").
inline double collectiveTimeoutSeconds() {
  const char *text = std::getenv("ZSHARD_COLLECTIVE_TIMEOUT_S");
  if (!text || !*text)
    return 600.0;
  char *end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value > 0)) {
    std::fprintf(stderr,
                 "zshard runtime: fatal: ZSHARD_COLLECTIVE_TIMEOUT_S='%s' is "
                 "not a positive number of seconds\n",
                 text);
    std::fflush(stderr);
    std::_Exit(kCollectiveTimeoutExitStatus);
  }
  return value;
}

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_COLLECTIVETIMEOUT_H
