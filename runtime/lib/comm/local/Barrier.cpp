//===- Barrier.cpp - A reusable barrier for the ranks of a group ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/local/Barrier.h"

#include "comm/CollectiveTimeout.h"

#include <chrono>
#include <cstdio>

using namespace zshard::rt;

Barrier::Barrier(int parties)
    : parties(parties), timeout(collectiveTimeoutSeconds()) {}

void Barrier::arriveAndWait() {
  std::unique_lock<std::mutex> lock(mutex);
  const uint64_t myRound = round;
  if (++arrived == parties) {
    arrived = 0;
    ++round;
    lock.unlock();
    roundCv.notify_all();
    return;
  }
  auto limit = std::chrono::duration<double>(timeout);
  if (!roundCv.wait_for(lock, limit, [&] { return round != myRound; })) {
    std::fprintf(stderr,
                 "zshard runtime: fatal: a collective waited %.0f s for %d of "
                 "%d ranks; a rank failed or is stuck (collective timeout, "
                 "ZSHARD_COLLECTIVE_TIMEOUT_S)\n",
                 timeout, parties - arrived, parties);
    std::fflush(stderr);
    std::_Exit(kCollectiveTimeoutExitStatus);
  }
}
