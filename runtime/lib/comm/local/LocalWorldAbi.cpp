//===- LocalWorldAbi.cpp - C ABI of the local backend ---------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/CommHandles.h"
#include "core/Error.h"
#include "core/Failure.h"

#include <new>
#include <string>

using namespace zshard::rt;

extern "C" zshard_rt_status
zshard_rt_local_world_create(int32_t ranks, double linkGbps,
                             double linkLatencyUs,
                             zshard_rt_local_world **out) {
  const char *entry = "zshard_rt_local_world_create";
  if (!out)
    return nullArgument(entry, "out");
  *out = nullptr;
  try {
    auto world = std::make_unique<zshard_rt_local_world>();
    EmulatedLink link;
    link.linkGbps = linkGbps;
    link.linkLatencyUs = linkLatencyUs;
    world->world = std::make_unique<LocalWorld>(int(ranks), link);
    world->ranks.resize(size_t(ranks));
    for (int32_t r = 0; r < ranks; ++r)
      world->ranks[size_t(r)].comm = &world->world->communicator(r);
    *out = world.release();
    return ZSHARD_RT_OK;
  } catch (const std::bad_alloc &) {
    return setError(ZSHARD_RT_ERROR_OUT_OF_MEMORY,
                    std::string(entry) + ": out of memory");
  } catch (const Failure &failure) {
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": " + failure.what());
  }
}

extern "C" void zshard_rt_local_world_destroy(zshard_rt_local_world *world) {
  delete world;
}

extern "C" zshard_rt_status
zshard_rt_local_world_comm(zshard_rt_local_world *world, int32_t rank,
                           zshard_rt_comm **out) {
  const char *entry = "zshard_rt_local_world_comm";
  if (!out)
    return nullArgument(entry, "out");
  *out = nullptr;
  if (!world)
    return nullArgument(entry, "world");
  if (rank < 0 || size_t(rank) >= world->ranks.size())
    return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                    std::string(entry) + ": rank " + std::to_string(rank) +
                        " is not in [0, " +
                        std::to_string(world->ranks.size()) + ")");
  *out = &world->ranks[size_t(rank)];
  return ZSHARD_RT_OK;
}
