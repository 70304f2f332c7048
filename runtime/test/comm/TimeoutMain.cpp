//===- TimeoutMain.cpp - a rank that never arrives ------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Two local ranks; rank 0 starts an all-reduce, rank 1 never joins (as if it
// had died). With ZSHARD_COLLECTIVE_TIMEOUT_S=1 the process must end with
// the timeout message and status 70 within seconds instead of hanging; the
// ctest wrapper checks both.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <chrono>
#include <cstdio>
#include <thread>

int main() {
  zshard_rt_local_world *world = nullptr;
  if (zshard_rt_local_world_create(2, 0.0, 0.0, &world) != ZSHARD_RT_OK)
    return 1;
  zshard_rt_comm *comm0 = nullptr, *comm1 = nullptr;
  zshard_rt_local_world_comm(world, 0, &comm0);
  zshard_rt_local_world_comm(world, 1, &comm1);
  int64_t shape[1] = {2};
  zshard_rt_grid *grids[2] = {nullptr, nullptr};
  std::thread builder([&] { zshard_rt_grid_create(comm1, 1, shape, &grids[1]); });
  zshard_rt_grid_create(comm0, 1, shape, &grids[0]);
  builder.join();
  // Rank 1 "dies": it never calls the collective.
  zshard_rt_set_current_grid(grids[0]);
  float data[4] = {1, 2, 3, 4};
  zshard_rt_step_all_reduce(1, data, data, 4, 0, 0);
  std::puts("the collective returned without its peer");
  return 2;
}
