//===- LocalGroup.h - Shared state of a group of thread ranks ---*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The ranks of a local group are threads of one process; their collectives
/// work directly on each other's buffers. Every collective is two barrier
/// rounds: each rank publishes its arguments in its slot and arrives; then
/// each reads the others' send buffers and writes its share of the results;
/// then all arrive again, after which no rank touches another's buffers.
///
///  - all-gather: rank r copies every rank's send buffer into its own recv.
///  - reduce-scatter: rank r reduces its segment of every send buffer into its
///    recv (through a staging buffer when in place, copied after the second
///    round, since its send is still being read).
///  - all-reduce: rank r reduces chunk r of the elements (chunkOf) from every
///    send buffer and writes it to every rank's recv, so each element is
///    reduced exactly once and all ranks hold the same bits. In place is safe:
///    chunk r is only read and written by rank r.
///
/// Every rank checks that all ranks called the same collective (kind, count,
/// dtype, op); when they did not, every rank fails with the same message
/// instead of corrupting memory.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_LOCAL_LOCALGROUP_H
#define ZSHARD_RUNTIME_LIB_COMM_LOCAL_LOCALGROUP_H

#include "comm/Communicator.h"
#include "comm/local/Barrier.h"
#include "comm/local/EmulatedLink.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace zshard::rt {

class LocalGroup {
public:
  LocalGroup(int size, EmulatedLink link);

  int size() const { return int(slots.size()); }
  const EmulatedLink &link() const { return emulatedLink; }

  /// Rank \p rank's part of \p collective; returns when the collective is
  /// complete for this rank. Returns the time the last rank arrived.
  std::chrono::steady_clock::time_point execute(int rank,
                                                const Collective &collective);

  /// Rank \p rank's part of a split (see Communicator::split): the new group,
  /// or nullptr for a negative color; \p *newRank is the rank in it.
  std::shared_ptr<LocalGroup> split(int rank, int color, int key, int *newRank);

private:
  struct Slot {
    Collective collective;
    int color = 0;
    int key = 0;
    std::shared_ptr<LocalGroup> made;
  };

  /// "" when every slot holds the same collective, else what differs.
  std::string disagreement() const;
  void work(int rank, const Collective &collective, void *staging);

  EmulatedLink emulatedLink;
  Barrier barrier;
  std::vector<Slot> slots;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_LOCAL_LOCALGROUP_H
