//===- RankRun.h - One rank of a zshard-run run -----------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One rank of a run, on the thread the launcher (Trainer.cpp) gives it: it
/// loads the artifact, initialises or loads the state, runs the steps, writes
/// the traces, saves and reports. A rank's thread has the rank's memory
/// context and the artifact's grid current, so the step's own allocations
/// (the MLIR hooks), its collectives and the sgemm counters are this rank's.
///
/// All ranks go through the same phases; each phase that can fail runs in
/// Team::check, so a failure on one rank stops every rank at the same point
/// (Team.h). Rank 0 prints.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RANKRUN_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RANKRUN_H

#include "Options.h"

#include <chrono>

namespace zshard::run {

class RankDevice;
class Team;

/// The clock of the run's wall time.
using Clock = std::chrono::steady_clock;

/// Runs rank team.rank() of the run \p options describe on the calling
/// thread, on \p device; \p wallStart: when the run started. Throws a
/// Failure (from core/Failure.h) when the run fails.
void runRank(const RunOptions &options, Team &team, Clock::time_point wallStart,
             const RankDevice &device);

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RANKRUN_H
