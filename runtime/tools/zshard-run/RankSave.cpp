//===- RankSave.cpp - How a rank saves and finds the run's state ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "RankSave.h"

#include "Team.h"

#include "core/DType.h"
#include "step/TorchStateDict.h"

#include <cstdlib>
#include <map>
#include <vector>

#include <unistd.h>

using namespace zshard;
using namespace zshard::rt;
using namespace zshard::run;

void zshard::run::saveRankFiles(const RankState &state, const std::string &base,
                                int64_t step) {
  state.team.check([&] {
    if (state.manifest.sharded())
      saveRankState(state.manifest, state.host,
                    rankFilePath(base, state.place.rank, state.place.ranks),
                    step, state.place);
    else
      saveState(state.manifest, state.host, base, step);
  });
}

/// Every shard argument, gathered over its unit's shard axes: each rank
/// receives the whole padded buffer (none for an unsharded step).
static std::map<int64_t, std::vector<unsigned char>>
gatherShardArguments(const RankState &state) {
  const Manifest &manifest = state.manifest;
  std::map<int64_t, std::vector<unsigned char>> full;
  for (const ArgumentDesc &arg : manifest.arguments) {
    if (!isShardRole(arg.role))
      continue;
    const UnitDesc *unit = manifest.findUnit(arg.unit);
    int64_t mask = 0;
    for (int64_t axis : unit->shardAxes)
      mask |= int64_t(1) << axis;
    std::vector<unsigned char> &bytes = full[arg.index];
    bytes.resize(unit->padded * dtypeSize(arg.type.dtype));
    state.team.gatherShards(mask, state.step.argument(size_t(arg.index)),
                            bytes.data(), arg.type.bytes);
  }
  return full;
}

void zshard::run::saveConsolidated(const RankState &state,
                                   const std::string &path, int64_t step) {
  const Manifest &manifest = state.manifest;
  if (!manifest.sharded()) {
    state.team.check([&] { saveState(manifest, state.host, path, step); });
    return;
  }
  // Rank 0 writes the file.
  std::map<int64_t, std::vector<unsigned char>> full =
      gatherShardArguments(state);
  state.team.check([&] {
    if (state.lead())
      saveFullState(manifest, state.host, full, path, step);
  });
}

void zshard::run::saveTorchStateDict(const RankState &state,
                                     const std::string &path, int64_t step) {
  std::map<int64_t, std::vector<unsigned char>> full =
      gatherShardArguments(state);
  state.team.check([&] {
    if (state.lead())
      saveTorchState(state.manifest, state.host, full, path, step);
  });
}

std::string zshard::run::saveCheckpoint(const RankState &state,
                                        const CheckpointDir &dir,
                                        CheckpointFormat format, int64_t step) {
  // Rank 0 makes the staging directory, every rank writes its part, and
  // rank 0 publishes it once all have.
  state.team.check([&] {
    if (state.lead())
      dir.beginSave(step);
  });
  std::string base =
      dir.stagingPath(step) + "/" + SavedCheckpoint::stateFileBase();
  if (state.manifest.sharded() && format == CheckpointFormat::Rank)
    saveRankFiles(state, base, step);
  else
    saveConsolidated(state, base, step);
  std::string published;
  state.team.check([&] {
    if (!state.lead())
      return;
    // Tests widen the moment a save is in progress (e2e.kill-resume kills
    // runs during saves too).
    if (const char *ms = std::getenv("ZSHARD_TEST_SAVE_DELAY_MS"))
      usleep(useconds_t(std::atoi(ms)) * 1000);
    published = dir.publish(step);
  });
  return published;
}

std::optional<SavedCheckpoint>
zshard::run::findNewestCheckpoint(Team &team, const CheckpointDir &dir) {
  struct Found {
    int64_t step = 0;
    int64_t rankFiles = 0;
    int64_t found = 0;
  } mine;
  team.check([&] {
    if (team.rank() != 0)
      return;
    if (std::optional<SavedCheckpoint> newest = dir.newest()) {
      mine.step = newest->step;
      mine.rankFiles = newest->rankFiles;
      mine.found = 1;
    }
  });
  Found found = team.allGatherValue(mine)[0];
  if (!found.found)
    return std::nullopt;
  SavedCheckpoint checkpoint;
  checkpoint.step = found.step;
  checkpoint.path = dir.path() + "/" + CheckpointDir::stepName(found.step);
  checkpoint.rankFiles = found.rankFiles != 0;
  return checkpoint;
}
