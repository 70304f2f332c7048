//===- Barrier.cpp - A reusable barrier for the ranks of a group ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/local/Barrier.h"

using namespace zshard::rt;

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
  roundCv.wait(lock, [&] { return round != myRound; });
}
