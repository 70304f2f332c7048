//===- CommHandles.h - The C ABI's communicator handles ---------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the opaque zshard_rt_comm, zshard_rt_local_world and zshard_rt_grid
/// of zshard_rt.h are: thin owners of the C++ objects of comm/.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_COMMHANDLES_H
#define ZSHARD_RUNTIME_LIB_COMM_COMMHANDLES_H

#include "comm/Communicator.h"
#include "comm/Grid.h"
#include "comm/local/LocalWorld.h"

#include "zshard/runtime/zshard_rt.h"

#include <memory>
#include <vector>

struct zshard_rt_comm {
  zshard::rt::Communicator *comm = nullptr;
  /// Set when zshard_rt_comm_destroy() may free it (not a world's rank).
  std::unique_ptr<zshard::rt::Communicator> owned;
};

struct zshard_rt_local_world {
  std::unique_ptr<zshard::rt::LocalWorld> world;
  std::vector<zshard_rt_comm> ranks;
};

struct zshard_rt_grid {
  std::unique_ptr<zshard::rt::Grid> grid;
};

#endif // ZSHARD_RUNTIME_LIB_COMM_COMMHANDLES_H
