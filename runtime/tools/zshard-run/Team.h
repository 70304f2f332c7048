//===- Team.h - The ranks of a zshard-run run, seen from one ----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One rank's view of the run's ranks, through the runtime's C ABI only: its
/// communicator (a local world's thread rank or an MPI process), a one-axis
/// control grid over every rank for zshard-run's own collectives (agreeing
/// on errors, gathering losses and figures), and the artifact's grid, which
/// is current on the rank's thread while the step runs.
///
/// Errors: a rank that fails (a bad rank file, a full disk) must not leave
/// the others waiting in a collective. The launcher therefore runs every part
/// that can fail inside check(), which ends in an agreement: every rank
/// learns the first failure (lowest rank) and throws it as an AgreedFailure,
/// so all ranks stop at the same point with the same message.
///
/// A team of one rank (a single-rank artifact on the local backend) has no
/// communicator and runs no collectives.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_TEAM_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_TEAM_H

#include "core/Failure.h"

#include "zshard/runtime/zshard_rt.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace zshard::run {

/// A failure every rank of the run agreed on. \c quiet: this rank should
/// not print it (another process prints it).
class AgreedFailure : public rt::Failure {
public:
  AgreedFailure(const std::string &message, bool quiet)
      : rt::Failure(message), quiet(quiet) {}
  bool quiet;
};

class Team {
public:
  /// One rank of the ranks of \p comm (NULL: a rank alone). Builds the
  /// control grid: collective over \p comm. \p printing: whether this rank
  /// prints the agreed failures (the lead, or every rank of a local world,
  /// whose launcher prints once).
  Team(zshard_rt_comm *comm, bool printing);
  ~Team();
  Team(const Team &) = delete;
  Team &operator=(const Team &) = delete;

  int rank() const { return rankId; }
  int size() const { return numRanks; }

  /// Collective: \p bytes of \p data from every rank, in rank order.
  std::vector<unsigned char> allGather(const void *data, size_t bytes);
  /// Collective: every rank's \p value (trivially copyable), in rank order.
  template <typename T> std::vector<T> allGatherValue(const T &value) {
    std::vector<unsigned char> bytes = allGather(&value, sizeof(T));
    std::vector<T> out(static_cast<size_t>(numRanks));
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }

  /// Collective: the failure of the lowest failing rank, or nothing.
  std::optional<std::string> agree(const std::optional<std::string> &error);

  /// Runs \p body, then agrees: throws an AgreedFailure on every rank when
  /// \p body threw on any.
  void check(const std::function<void()> &body);

  /// Builds the artifact's grid of \p shape over the communicator
  /// (collective) and makes it current on the calling thread.
  void createGrid(const std::vector<int64_t> &shape);
  zshard_rt_grid *grid() const { return artifactGrid; }

  /// Collective over the group of \p axesMask of the artifact's grid: every
  /// rank's \p shardBytes at \p shard into \p full, in group order.
  void gatherShards(int64_t axesMask, const void *shard, void *full,
                    uint64_t shardBytes);

private:
  zshard_rt_comm *comm;
  bool printing;
  int rankId = 0;
  int numRanks = 1;
  zshard_rt_grid *control = nullptr;
  zshard_rt_grid *artifactGrid = nullptr;
};

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_TEAM_H
