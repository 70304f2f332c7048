//===- Launch.cpp - How zshard-run was started ----------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace zshard;
using namespace zshard::run;

namespace {

/// The launchers' (rank, size) variables: Open MPI, MPICH/Hydra and PMI-1/2
/// launchers, PMIx (rank only), MVAPICH.
struct LaunchVariables {
  const char *rank;
  const char *size; ///< NULL: the launcher sets none.
};
constexpr LaunchVariables launchVariables[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"PMIX_RANK", nullptr},
    {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"}};

/// \p text as a non-negative integer, or 0.
int64_t count(const char *text) {
  if (!text)
    return 0;
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && value > 0 ? value : 0;
}

const char *systemEnv(const char *name) { return std::getenv(name); }

} // namespace

std::optional<MpiLaunch> zshard::run::mpiLaunch(const GetEnv &getEnv) {
  std::optional<MpiLaunch> launch;
  for (const LaunchVariables &vars : launchVariables) {
    const char *rank = getEnv(vars.rank);
    const char *size = vars.size ? getEnv(vars.size) : nullptr;
    if (!rank && !size)
      continue;
    if (!launch)
      launch.emplace();
    launch->rank = std::max(launch->rank, count(rank));
    launch->size = std::max(launch->size, count(size));
  }
  return launch;
}

bool zshard::run::launchedByMpi() { return mpiLaunch(systemEnv).has_value(); }

bool zshard::run::isSecondaryMpiProcess() {
  std::optional<MpiLaunch> launch = mpiLaunch(systemEnv);
  return launch && launch->rank != 0;
}

std::optional<std::string> zshard::run::resolveLaunch(RunOptions &options,
                                                      const GetEnv &getEnv,
                                                      bool mpiBuilt) {
  std::optional<MpiLaunch> launch = mpiLaunch(getEnv);
  if (options.backendGiven || !launch || !launch->several())
    return std::nullopt;
  std::string processes = launch->size > 1
                              ? std::to_string(launch->size) + " processes"
                              : "several processes";
  if (!mpiBuilt)
    throw LaunchError(
        "started by an MPI launcher (" + processes +
        "), but this zshard-run's runtime is built without MPI: every "
        "process would train alone; run the ranks as threads of one "
        "process (zshard-run ARTIFACT --ranks N, without mpirun), or use a "
        "runtime built with MPI");
  Backend backend =
      options.device == DeviceKind::Cuda ? Backend::Nccl : Backend::Mpi;
  const char *name = backend == Backend::Nccl ? "nccl" : "mpi";
  if (options.linkGbps > 0 || options.linkLatencyUs > 0)
    throw LaunchError(std::string("--link-gbps and --link-latency-us emulate "
                                  "a link between the local backend's thread "
                                  "ranks; under an MPI launcher (") +
                      processes + ") zshard-run uses --backend " + name);
  options.backend = backend;
  return "zshard-run: started by an MPI launcher (" + processes +
         "): one rank per process, --backend " + name;
}
