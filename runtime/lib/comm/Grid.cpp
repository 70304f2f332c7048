//===- Grid.cpp - A device grid and the groups along its axes -------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/Grid.h"

#include "core/Failure.h"

#include <string>

using namespace zshard::rt;

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "{";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "}";
}

/// Row-major index of \p coords restricted to the axes where \p mask has
/// (when \p inMask) or lacks (otherwise) a bit.
int64_t linearIndex(const std::vector<int64_t> &coords,
                    const std::vector<int64_t> &shape, uint64_t mask,
                    bool inMask) {
  int64_t index = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    if (bool(mask >> i & 1) == inMask)
      index = index * shape[i] + coords[i];
  return index;
}

} // namespace

std::vector<int64_t> Grid::coordsOf(int64_t rank,
                                    const std::vector<int64_t> &shape) {
  std::vector<int64_t> coords(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    coords[i] = rank % shape[i];
    rank /= shape[i];
  }
  return coords;
}

Grid::Grid(Communicator &comm, std::vector<int64_t> shape)
    : gridShape(std::move(shape)), myRank(comm.rank()) {
  std::string where = "grid " + shapeText(gridShape) + ": ";
  if (gridShape.empty() || gridShape.size() > size_t(maxAxes))
    fail(where + "needs 1 to " + std::to_string(maxAxes) + " axes");
  int64_t product = 1;
  for (int64_t dim : gridShape) {
    if (dim < 1 || dim > comm.size())
      fail(where + "axis size " + std::to_string(dim) + " is not in [1, " +
           std::to_string(comm.size()) + "]");
    product *= dim;
  }
  if (product != comm.size())
    fail(where + std::to_string(product) + " positions for " +
         std::to_string(comm.size()) + " ranks");
  myCoords = coordsOf(myRank, gridShape);
  const uint64_t numMasks = uint64_t(1) << gridShape.size();
  for (uint64_t mask = 0; mask < numMasks; ++mask) {
    int color = int(linearIndex(myCoords, gridShape, mask, false));
    int key = int(linearIndex(myCoords, gridShape, mask, true));
    groups.push_back(comm.split(color, key));
  }
}

Grid::~Grid() = default;

Communicator &Grid::group(uint64_t axesMask) {
  if (axesMask >= groups.size())
    fail("grid " + shapeText(gridShape) + ": axes mask " +
         std::to_string(axesMask) + " names an axis at or above " +
         std::to_string(axes()));
  return *groups[axesMask];
}

void Grid::finishPending() {
  for (auto &group : groups)
    group->finishPending();
}
