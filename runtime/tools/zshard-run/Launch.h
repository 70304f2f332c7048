//===- Launch.h - How zshard-run was started --------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the environment says about the launch: an MPI launcher (mpirun,
/// mpiexec, a PMI launcher) sets variables naming this process's rank and
/// the number of processes. A run without --backend under such a launch of
/// several processes would otherwise run one independent copy per process;
/// resolveLaunch() makes it use MPI (NCCL with --device cuda) when the
/// runtime is built with MPI, and refuses it otherwise.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_LAUNCH_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_LAUNCH_H

#include "Options.h"

#include "core/Failure.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace zshard::run {

/// Reads an environment variable: NULL when unset.
using GetEnv = std::function<const char *(const char *)>;

/// An MPI launch, by the launchers' variables.
struct MpiLaunch {
  /// This process's rank (0 when the launcher names none).
  int64_t rank = 0;
  /// The number of processes; 0 when the launcher names no count.
  int64_t size = 0;
  /// Whether the launch has several processes: a count > 1, or a rank > 0.
  bool several() const { return size > 1 || rank > 0; }
};

/// The MPI launch this process belongs to (OMPI_COMM_WORLD_*, PMI_*,
/// PMIX_RANK, MV2_COMM_WORLD_*), or nothing.
std::optional<MpiLaunch> mpiLaunch(const GetEnv &getEnv);

/// Whether a launcher such as mpirun started this process.
bool launchedByMpi();

/// Whether this process is a rank other than 0 of an MPI launch, which
/// should not repeat errors every process sees alike.
bool isSecondaryMpiProcess();

/// The launch cannot run: every process of it fails alike (the lead prints
/// it).
class LaunchError : public rt::Failure {
public:
  using rt::Failure::Failure;
};

/// Under a launch of several processes without --backend: sets the backend
/// to mpi (nccl with --device cuda) when \p mpiBuilt, and returns the note
/// to print once; throws a LaunchError otherwise, or when the options only
/// the local backend has are given. Returns nothing when there is nothing
/// to do.
std::optional<std::string> resolveLaunch(RunOptions &options,
                                         const GetEnv &getEnv, bool mpiBuilt);

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_LAUNCH_H
