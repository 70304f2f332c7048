//===- UnitGeometry.cpp - where a unit's shards sit in the grid -----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The parts of the manifest's units a sharded run computes with: a rank's
// coordinates in the grid, the shard a unit gives it and a unit's state
// slots.
//
//===----------------------------------------------------------------------===//

#include "step/Manifest.h"

using namespace zshard::rt;

const UnitSlot *UnitDesc::findSlot(std::string_view name) const {
  for (const UnitSlot &slot : slots)
    if (slot.name == name)
      return &slot;
  return nullptr;
}

std::vector<int64_t> zshard::rt::gridCoords(int64_t rank,
                                            const std::vector<int64_t> &shape) {
  std::vector<int64_t> coords(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    coords[i] = rank % shape[i];
    rank /= shape[i];
  }
  return coords;
}

uint64_t zshard::rt::shardIndex(const UnitDesc &unit, const GridDesc &grid,
                                const std::vector<int64_t> &coords) {
  uint64_t index = 0;
  for (int64_t axis : unit.shardAxes)
    index = index * uint64_t(grid.shape[size_t(axis)]) +
            uint64_t(coords[size_t(axis)]);
  return index;
}
