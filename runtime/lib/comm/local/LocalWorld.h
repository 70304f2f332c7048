//===- LocalWorld.h - N ranks as threads of one process ---------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The local backend's world: `LocalWorld world(N)`, then thread r uses
/// `world.communicator(r)`. An EmulatedLink makes its collectives (and those
/// of groups split from them) take the time a modelled network would.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_LOCAL_LOCALWORLD_H
#define ZSHARD_RUNTIME_LIB_COMM_LOCAL_LOCALWORLD_H

#include "comm/Communicator.h"
#include "comm/local/EmulatedLink.h"

#include <memory>
#include <vector>

namespace zshard::rt {

class LocalWorld {
public:
  /// \p ranks >= 1; throws a Failure otherwise, or for a bad link.
  explicit LocalWorld(int ranks, EmulatedLink link = {});
  ~LocalWorld();
  LocalWorld(const LocalWorld &) = delete;
  LocalWorld &operator=(const LocalWorld &) = delete;

  int size() const { return int(ranks.size()); }
  const EmulatedLink &link() const { return emulatedLink; }

  /// Rank \p rank's communicator, for one thread at a time; lives as long as
  /// the world.
  Communicator &communicator(int rank);

private:
  EmulatedLink emulatedLink;
  std::vector<std::unique_ptr<Communicator>> ranks;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_LOCAL_LOCALWORLD_H
