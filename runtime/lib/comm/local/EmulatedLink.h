//===- EmulatedLink.h - A modelled network for local ranks ------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Emulation, not measurement: with a link set, each local collective takes at
/// least linkLatencyUs + wireBytes / linkGbps, counted from the moment the last
/// rank arrives, where wireBytes is what one rank sends in the ring algorithm:
/// (N-1)/N * size for all-gather (size = the gathered buffer) and
/// reduce-scatter (size = the input), 2 (N-1)/N * size for all-reduce (a
/// reduce-scatter then an all-gather), 0 for a barrier. A group of one rank
/// sends nothing and takes no time. The local backend sleeps out the rest of
/// the time on the thread that runs the collective, so a started collective
/// keeps its progress thread busy while the caller computes, as a real link
/// would.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_LOCAL_EMULATEDLINK_H
#define ZSHARD_RUNTIME_LIB_COMM_LOCAL_EMULATEDLINK_H

#include "comm/Communicator.h"

namespace zshard::rt {

struct EmulatedLink {
  /// Bandwidth in 10^9 bits per second; 0: unlimited.
  double linkGbps = 0;
  /// Latency of every collective in microseconds.
  double linkLatencyUs = 0;

  /// Whether any time is modelled at all.
  bool enabled() const { return linkGbps > 0 || linkLatencyUs > 0; }

  /// Throws a Failure unless both settings are finite and not negative.
  void check() const;

  /// Bytes one rank of \p groupSize sends for \p collective (see above).
  static double wireBytes(const Collective &collective, int groupSize);

  /// Least seconds \p collective takes in a group of \p groupSize.
  double seconds(const Collective &collective, int groupSize) const;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_LOCAL_EMULATEDLINK_H
