//===- LaunchTest.cpp - zshard-run under an MPI launcher ------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// resolveLaunch() on made-up environments: a run under mpirun without
// --backend uses MPI where the runtime has it and refuses where it does
// not, in builds of either kind (ShardedRunnerMpiTest runs the real thing).
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include <gtest/gtest.h>

#include <map>

using namespace zshard::run;

namespace {

GetEnv environment(std::map<std::string, std::string> vars) {
  return [vars](const char *name) -> const char * {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

std::string launchError(RunOptions options, const GetEnv &env, bool mpi) {
  try {
    resolveLaunch(options, env, mpi);
  } catch (const LaunchError &e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

// Tests what the launchers' variables say: Open MPI, PMI and MVAPICH sizes,
// a PMIx rank alone, and no launcher.
TEST(LaunchTest, LaunchersVariables) {
  EXPECT_FALSE(mpiLaunch(environment({})));
  std::optional<MpiLaunch> ompi = mpiLaunch(environment(
      {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}}));
  ASSERT_TRUE(ompi);
  EXPECT_EQ(ompi->rank, 1);
  EXPECT_EQ(ompi->size, 4);
  EXPECT_TRUE(ompi->several());
  std::optional<MpiLaunch> alone = mpiLaunch(environment({{"PMI_SIZE", "1"}}));
  ASSERT_TRUE(alone);
  EXPECT_FALSE(alone->several());
  EXPECT_TRUE(mpiLaunch(environment({{"PMIX_RANK", "2"}}))->several());
  EXPECT_FALSE(mpiLaunch(environment({{"PMIX_RANK", "0"}}))->several());
  EXPECT_TRUE(
      mpiLaunch(environment({{"MV2_COMM_WORLD_SIZE", "2"}}))->several());
}

// Tests the choice: MPI (NCCL on GPUs) with a note when the runtime has MPI,
// one error line when it does not, nothing without a launch of several
// processes or with an explicit --backend.
TEST(LaunchTest, SeveralProcessesWithoutBackend) {
  GetEnv four = environment(
      {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
  RunOptions options;
  EXPECT_EQ(resolveLaunch(options, four, true),
            "zshard-run: started by an MPI launcher (4 processes): one rank "
            "per process, --backend mpi");
  EXPECT_EQ(options.backend, Backend::Mpi);

  RunOptions gpu;
  gpu.device = DeviceKind::Cuda;
  EXPECT_TRUE(resolveLaunch(gpu, four, true));
  EXPECT_EQ(gpu.backend, Backend::Nccl);

  EXPECT_EQ(launchError(RunOptions(), four, false),
            "started by an MPI launcher (4 processes), but this zshard-run's "
            "runtime is built without MPI: every process would train alone; "
            "run the ranks as threads of one process (zshard-run ARTIFACT "
            "--ranks N, without mpirun), or use a runtime built with MPI");
  EXPECT_EQ(launchError(RunOptions(), environment({{"PMIX_RANK", "3"}}), false)
                .rfind("started by an MPI launcher (several processes), ", 0),
            0u);
  RunOptions link;
  link.linkGbps = 10;
  EXPECT_EQ(launchError(link, four, true),
            "--link-gbps and --link-latency-us emulate a link between the "
            "local backend's thread ranks; under an MPI launcher (4 "
            "processes) zshard-run uses --backend mpi");

  RunOptions given;
  given.backendGiven = true;
  EXPECT_FALSE(resolveLaunch(given, four, false));
  EXPECT_EQ(given.backend, Backend::Local);
  RunOptions single;
  EXPECT_FALSE(resolveLaunch(single, environment({{"PMI_SIZE", "1"}}), false));
  EXPECT_FALSE(resolveLaunch(single, environment({}), false));
}
