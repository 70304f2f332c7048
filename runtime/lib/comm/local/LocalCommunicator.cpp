//===- LocalCommunicator.cpp - One thread rank of a local group -----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/local/LocalCommunicator.h"

#include "comm/local/LocalGroup.h"

#include <chrono>
#include <thread>

using namespace zshard::rt;

LocalCommunicator::LocalCommunicator(std::shared_ptr<LocalGroup> group,
                                     int rank)
    : group(std::move(group)), myRank(rank) {}

LocalCommunicator::~LocalCommunicator() { stopProgress(); }

int LocalCommunicator::size() const { return group->size(); }

void LocalCommunicator::run(const Collective &collective) {
  auto allArrived = group->execute(myRank, collective);
  double seconds = group->link().seconds(collective, group->size());
  if (seconds > 0)
    std::this_thread::sleep_until(
        allArrived + std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::duration<double>(seconds)));
}

std::unique_ptr<Communicator> LocalCommunicator::splitGroup(int color,
                                                            int key) {
  int newRank = -1;
  std::shared_ptr<LocalGroup> made = group->split(myRank, color, key, &newRank);
  if (!made)
    return nullptr;
  return std::make_unique<LocalCommunicator>(std::move(made), newRank);
}
