//===- Grid.h - A device grid and the groups along its axes -----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The ranks of a communicator laid out as a grid, e.g. {R, S}: rank r sits at
/// the row-major coordinates of r (the last axis varies fastest). For a set of
/// axes (a bit mask, bit i = axis i) the grid has the communicator of this
/// rank's group: the ranks that differ from it only in those axes, ordered
/// row-major over those axes. Mask 0 is this rank alone; the mask of all axes
/// is every rank.
///
/// Building a grid is collective over the communicator: every rank builds it
/// with the same shape. All 2^axes groups are split off then (at most
/// 2^maxAxes), so later collectives on any group need no further agreement.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_GRID_H
#define ZSHARD_RUNTIME_LIB_COMM_GRID_H

#include "comm/Communicator.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace zshard::rt {

class Grid {
public:
  static constexpr int maxAxes = 6;

  /// Splits \p comm into the groups of a grid of \p shape (1 to maxAxes axes,
  /// each at least 1, product comm.size()); throws a Failure otherwise.
  Grid(Communicator &comm, std::vector<int64_t> shape);
  ~Grid();
  Grid(const Grid &) = delete;
  Grid &operator=(const Grid &) = delete;

  int axes() const { return int(gridShape.size()); }
  const std::vector<int64_t> &shape() const { return gridShape; }
  /// This rank's coordinates.
  const std::vector<int64_t> &coords() const { return myCoords; }
  /// This rank in the communicator the grid was built on.
  int rank() const { return myRank; }

  /// The group of the axes in \p axesMask; throws a Failure for bits at or
  /// above axes().
  Communicator &group(uint64_t axesMask);

  /// Waits for the collectives started on every group.
  void finishPending();

  /// The row-major coordinates of \p rank in \p shape.
  static std::vector<int64_t> coordsOf(int64_t rank,
                                       const std::vector<int64_t> &shape);

private:
  std::vector<int64_t> gridShape;
  std::vector<int64_t> myCoords;
  int myRank;
  std::vector<std::unique_ptr<Communicator>> groups; // index: axes mask
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_GRID_H
