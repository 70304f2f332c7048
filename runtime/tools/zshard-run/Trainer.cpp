//===- Trainer.cpp - Launching the ranks of zshard-run --------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Every rank runs runRank() (RankRun.h) on its own thread (the local backend:
// one thread per rank; MPI: the main thread of each process; a single-rank
// artifact: the calling thread, with no communicator).
//
//===----------------------------------------------------------------------===//

#include "Trainer.h"

#include "Launch.h"
#include "RankDevice.h"
#include "RankRun.h"
#include "RunChecks.h"
#include "Team.h"

#include "core/Failure.h"
#include "step/Manifest.h"

#include "zshard/runtime/zshard_rt.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

using namespace zshard;
using namespace zshard::rt;
using namespace zshard::run;

namespace {

/// MPI for the run's length: initialised (unless the caller did), this
/// process's communicator, finalised at the end.
class MpiSession {
public:
  MpiSession() {
    if (zshard_rt_mpi_init(nullptr, nullptr) != ZSHARD_RT_OK)
      fail(std::string("--backend mpi: ") + zshard_rt_last_error_message());
    if (zshard_rt_mpi_comm_create(&comm) != ZSHARD_RT_OK) {
      std::string message = zshard_rt_last_error_message();
      zshard_rt_mpi_finalize();
      fail("--backend mpi: " + message);
    }
  }
  ~MpiSession() {
    zshard_rt_comm_destroy(comm);
    zshard_rt_mpi_finalize();
  }
  MpiSession(const MpiSession &) = delete;
  MpiSession &operator=(const MpiSession &) = delete;
  zshard_rt_comm *get() const { return comm; }

private:
  zshard_rt_comm *comm = nullptr;
};

/// Runs this process's rank of a multi-process run (MPI or NCCL) over
/// \p comm, on \p device.
void trainProcess(const RunOptions &options, Clock::time_point wallStart,
                  zshard_rt_comm *comm, const RankDevice &device) {
  int32_t rank = 0, size = 1;
  zshard_rt_comm_rank(comm, &rank);
  zshard_rt_comm_size(comm, &size);
  Team team(comm, rank == 0);
  try {
    team.check([&] {
      if (options.ranks != 0 && options.ranks != size)
        fail("--ranks " + std::to_string(options.ranks) + " differs from the " +
             "size of the " +
             (options.backend == Backend::Mpi ? "MPI" : "NCCL") + " world, " +
             std::to_string(size));
    });
    runRank(options, team, wallStart, device);
  } catch (const AgreedFailure &failure) {
    // Rank 0 reports before any process exits: mpiexec ends the job when
    // the first process fails, and would cut rank 0's message short.
    if (!failure.quiet) {
      std::fprintf(stderr, "zshard-run: error: %s\n", failure.what());
      std::fflush(stderr);
    }
    team.allGatherValue(int32_t(0));
    throw AgreedFailure(failure.what(), true);
  }
}

void trainMpi(const RunOptions &options, Clock::time_point wallStart) {
  MpiSession mpi;
  RankDevice device(DeviceKind::Cpu, 0);
  trainProcess(options, wallStart, mpi.get(), device);
}

/// NCCL for the run's length: under mpirun MPI carries the id (the runtime
/// must be built with MPI); otherwise ZSHARD_RANK, ZSHARD_WORLD_SIZE and
/// ZSHARD_NCCL_ID_FILE (the runtime reads them). Then this process's GPU
/// and its NCCL communicator.
class NcclSession {
public:
  NcclSession() {
    int32_t rank = 0;
    if (launchedByMpi() && !std::getenv("ZSHARD_RANK")) {
      if (!(zshard_rt_build_features() & ZSHARD_RT_FEATURE_MPI))
        fail("--backend nccl under mpirun needs a zshard runtime built with "
             "MPI (or set ZSHARD_RANK, ZSHARD_WORLD_SIZE and "
             "ZSHARD_NCCL_ID_FILE)");
      if (zshard_rt_mpi_init(nullptr, nullptr) != ZSHARD_RT_OK)
        fail(std::string("--backend nccl: ") + zshard_rt_last_error_message());
      mpi = true;
      int size = 0, worldRank = 0;
      if (zshard_rt_mpi_world(&worldRank, &size) != ZSHARD_RT_OK)
        fail(std::string("--backend nccl: ") + zshard_rt_last_error_message());
      rank = worldRank;
    } else if (const char *text = std::getenv("ZSHARD_RANK")) {
      rank = int32_t(std::strtol(text, nullptr, 10)); // checked by the runtime
      if (rank < 0)
        rank = 0;
    }
    device = std::make_unique<RankDevice>(DeviceKind::Cuda, rank);
    if (zshard_rt_nccl_comm_create(device->get(), &comm) != ZSHARD_RT_OK) {
      std::string why = zshard_rt_last_error_message();
      const std::string prefix = "zshard_rt_nccl_comm_create: ";
      if (why.rfind(prefix, 0) == 0)
        why = why.substr(prefix.size());
      fail("--backend nccl: " + why);
    }
  }
  ~NcclSession() {
    zshard_rt_comm_destroy(comm);
    device.reset();
    if (mpi)
      zshard_rt_mpi_finalize();
  }
  NcclSession(const NcclSession &) = delete;
  NcclSession &operator=(const NcclSession &) = delete;
  zshard_rt_comm *get() const { return comm; }
  const RankDevice &rankDevice() const { return *device; }

private:
  bool mpi = false;
  std::unique_ptr<RankDevice> device;
  zshard_rt_comm *comm = nullptr;
};

void trainNccl(const RunOptions &options, Clock::time_point wallStart) {
  NcclSession nccl;
  trainProcess(options, wallStart, nccl.get(), nccl.rankDevice());
}

void trainLocal(const RunOptions &options, Clock::time_point wallStart) {
  // The artifact decides whether the run needs ranks at all; each rank loads
  // it again (cheap), as MPI processes do.
  Manifest manifest = loadManifest(options.artifact);
  checkTarget(manifest, options);
  checkRanks(manifest, options, options.ranks);
  RankDevice device(options.device, 0);
  if (!manifest.sharded()) {
    Team team(nullptr, true);
    runRank(options, team, wallStart, device);
    return;
  }
  if (device.onGpu())
    fail(manifest.path + ": a sharded artifact on --device cuda runs with "
                         "--backend nccl (one process per GPU; the local "
                         "backend's ranks share host memory)");
  int32_t ranks = int32_t(manifest.ranks);
  zshard_rt_local_world *world = nullptr;
  if (zshard_rt_local_world_create(ranks, options.linkGbps,
                                   options.linkLatencyUs,
                                   &world) != ZSHARD_RT_OK)
    fail(std::string("cannot create a local world of ") +
         std::to_string(ranks) + " ranks: " + zshard_rt_last_error_message());
  std::vector<std::exception_ptr> failures(static_cast<size_t>(ranks));
  {
    std::vector<std::thread> threads;
    for (int32_t r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] {
        try {
          zshard_rt_comm *comm = nullptr;
          if (zshard_rt_local_world_comm(world, r, &comm) != ZSHARD_RT_OK)
            fail(zshard_rt_last_error_message());
          // Every thread agrees on failures; the launcher prints one.
          Team team(comm, true);
          runRank(options, team, wallStart, device);
        } catch (...) {
          failures[size_t(r)] = std::current_exception();
        }
      });
    for (std::thread &thread : threads)
      thread.join();
  }
  zshard_rt_local_world_destroy(world);
  for (const std::exception_ptr &failure : failures)
    if (failure)
      std::rethrow_exception(failure);
}

} // namespace

void zshard::run::train(const RunOptions &options) {
  Clock::time_point wallStart = Clock::now();
  if (zshard_rt_cpu_set_num_threads(options.threads) != ZSHARD_RT_OK)
    fail(zshard_rt_last_error_message());
  if (options.backend == Backend::Mpi)
    trainMpi(options, wallStart);
  else if (options.backend == Backend::Nccl)
    trainNccl(options, wallStart);
  else
    trainLocal(options, wallStart);
}
