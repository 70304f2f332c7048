//===- RankSave.h - How a rank saves and finds the run's state --*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// --save (rank files), --save-full (one consolidated file gathered to rank
/// 0) and the checkpoints of --checkpoint-dir, written by every rank of a
/// team together; and the newest checkpoint --resume auto continues from.
/// Every function here is collective: each rank of the team calls it.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RANKSAVE_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RANKSAVE_H

#include "CheckpointDir.h"

#include "step/Checkpoint.h"
#include "step/Manifest.h"
#include "step/StepBuffers.h"

#include <cstdint>
#include <optional>
#include <string>

namespace zshard::run {

class Team;

/// One rank's view of the state it saves.
struct RankState {
  Team &team;
  const rt::Manifest &manifest;
  rt::RankPlace place;
  /// Where the host reads the state (on a GPU: its host mirror, brought up
  /// to date first).
  const rt::StepBuffers &host;
  /// The step's own buffers, which the shards are gathered from.
  const rt::StepBuffers &step;
  bool lead() const { return place.rank == 0; }
};

/// This rank's rank file of \p base (an unsharded step: the consolidated
/// file itself, written by the one rank).
void saveRankFiles(const RankState &state, const std::string &base,
                   int64_t step);

/// The consolidated file \p path: the shards gathered to every rank, rank 0
/// writes it.
void saveConsolidated(const RankState &state, const std::string &path,
                      int64_t step);

/// The model's torch state_dict \p path (step/TorchStateDict.h), gathered
/// as saveConsolidated does; rank 0 writes it.
void saveTorchStateDict(const RankState &state, const std::string &path,
                        int64_t step);

/// The checkpoint of \p step in \p dir, in \p format (an unsharded step:
/// always one file); returns, on rank 0, the directory it published.
std::string saveCheckpoint(const RankState &state, const CheckpointDir &dir,
                           CheckpointFormat format, int64_t step);

/// The newest checkpoint of \p dir as rank 0 finds it, the same on every
/// rank.
std::optional<SavedCheckpoint> findNewestCheckpoint(Team &team,
                                                    const CheckpointDir &dir);

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RANKSAVE_H
