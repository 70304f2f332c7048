//===- Barrier.h - A reusable barrier for the ranks of a group --*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A generation-counting barrier: each round lets all parties through once the
/// last one arrives, and the next round can begin at once. Waiters sleep on a
/// condition variable rather than spin, since ranks share cores with compute.
/// The mutex also orders memory: what a party wrote before arriving is visible
/// to every party after the round.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_LOCAL_BARRIER_H
#define ZSHARD_RUNTIME_LIB_COMM_LOCAL_BARRIER_H

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace zshard::rt {

class Barrier {
public:
  explicit Barrier(int parties);

  /// Blocks until all parties have arrived in this round. A party waiting
  /// longer than the collective timeout (ZSHARD_COLLECTIVE_TIMEOUT_S seconds,
  /// default 600; see comm/CollectiveTimeout.h) means a rank failed or is
  /// stuck: it prints one line saying so and ends the process with status 70,
  /// so ranks never hang forever.
  void arriveAndWait();

private:
  const int parties;
  const double timeout;
  std::mutex mutex;
  std::condition_variable roundCv;
  int arrived = 0;
  uint64_t round = 0;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_LOCAL_BARRIER_H
