//===- LocalCommunicator.h - One thread rank of a local group ---*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The local backend's communicator: rank \c rank() of a LocalGroup, used by
/// one thread. Collectives run through the group (see LocalGroup.h), then
/// last as long as the group's emulated link says (see EmulatedLink.h).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_LOCAL_LOCALCOMMUNICATOR_H
#define ZSHARD_RUNTIME_LIB_COMM_LOCAL_LOCALCOMMUNICATOR_H

#include "comm/Communicator.h"

#include <memory>

namespace zshard::rt {

class LocalGroup;

class LocalCommunicator final : public Communicator {
public:
  LocalCommunicator(std::shared_ptr<LocalGroup> group, int rank);
  ~LocalCommunicator() override;

  int rank() const override { return myRank; }
  int size() const override;
  const char *backend() const override { return "local"; }

protected:
  void run(const Collective &collective) override;
  std::unique_ptr<Communicator> splitGroup(int color, int key) override;

private:
  std::shared_ptr<LocalGroup> group;
  int myRank;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_LOCAL_LOCALCOMMUNICATOR_H
