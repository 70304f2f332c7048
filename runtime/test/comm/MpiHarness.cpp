//===- MpiHarness.cpp - Test bodies as one rank of an MPI job -------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The conformance suite under mpiexec: each process is one rank, runs every
// case, and exchanges the per-rank values with plain MPI (not the code under
// test).
//
//===----------------------------------------------------------------------===//

#include "CommHarness.h"

#include "comm/mpi/MpiCommunicator.h"

#include <mpi.h>

#include <exception>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

std::vector<uint64_t> gatherValues(uint64_t mine) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<uint64_t> values(size_t(size), 0);
  MPI_Allgather(&mine, 1, MPI_UINT64_T, values.data(), 1, MPI_UINT64_T,
                MPI_COMM_WORLD);
  return values;
}

class MpiHarness final : public Harness {
public:
  MpiHarness() : comm(MPI_COMM_WORLD) {}

  int size() const override { return comm.size(); }
  const char *backend() const override { return "mpi"; }

  std::vector<uint64_t>
  run(const std::function<uint64_t(Communicator &)> &body) override {
    uint64_t mine = 0;
    try {
      mine = body(comm);
    } catch (const std::exception &error) {
      ADD_FAILURE() << "rank " << comm.rank() << " threw: " << error.what();
    }
    return gatherValues(mine);
  }

  std::vector<uint64_t>
  runC(const std::function<uint64_t(zshard_rt_comm *)> &body) override {
    zshard_rt_comm *handle = nullptr;
    EXPECT_EQ(zshard_rt_mpi_comm_create(&handle), ZSHARD_RT_OK)
        << zshard_rt_last_error_message();
    uint64_t mine = handle ? body(handle) : 0;
    EXPECT_EQ(zshard_rt_comm_destroy(handle), ZSHARD_RT_OK);
    return gatherValues(mine);
  }

private:
  MpiCommunicator comm;
};

} // namespace

std::vector<BackendSpec> zshard::rt::test::conformanceBackends() {
  return {{"mpi", 0}};
}

std::unique_ptr<Harness>
zshard::rt::test::makeHarness(const BackendSpec &spec) {
  if (spec.backend == "mpi")
    return std::make_unique<MpiHarness>();
  return makeLocalHarness(spec.ranks);
}
