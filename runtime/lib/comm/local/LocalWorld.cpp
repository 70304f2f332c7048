//===- LocalWorld.cpp - N ranks as threads of one process -----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/local/LocalWorld.h"

#include "comm/local/LocalCommunicator.h"
#include "comm/local/LocalGroup.h"
#include "core/Failure.h"

#include <string>

using namespace zshard::rt;

LocalWorld::LocalWorld(int numRanks, EmulatedLink link) : emulatedLink(link) {
  if (numRanks < 1)
    fail("local world: " + std::to_string(numRanks) +
         " ranks (needs at least 1)");
  link.check();
  auto group = std::make_shared<LocalGroup>(numRanks, link);
  for (int r = 0; r < numRanks; ++r)
    ranks.push_back(std::make_unique<LocalCommunicator>(group, r));
}

LocalWorld::~LocalWorld() = default;

Communicator &LocalWorld::communicator(int rank) {
  if (rank < 0 || rank >= size())
    fail("local world: rank " + std::to_string(rank) + " is not in [0, " +
         std::to_string(size()) + ")");
  return *ranks[size_t(rank)];
}
