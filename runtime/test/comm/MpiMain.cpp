//===- MpiMain.cpp - Entry of the conformance suite under mpiexec ---------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Initializes MPI through the runtime (MPI_THREAD_MULTIPLE), runs the suite on
// every rank, and exits with a failure on every rank when any rank failed.
// Only rank 0 prints GoogleTest's report; other ranks print their failures.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace {

/// Prints a rank's failed assertions (its report is not printed).
class FailurePrinter : public testing::EmptyTestEventListener {
public:
  explicit FailurePrinter(int rank) : rank(rank) {}
  void OnTestPartResult(const testing::TestPartResult &result) override {
    if (result.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank,
                   result.file_name() ? result.file_name() : "?",
                   result.line_number(), result.summary());
  }

private:
  int rank;
};

} // namespace

int main(int argc, char **argv) {
  if (zshard_rt_mpi_init(&argc, &argv) != ZSHARD_RT_OK) {
    std::fprintf(stderr, "%s\n", zshard_rt_last_error_message());
    return 1;
  }
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    testing::TestEventListeners &listeners =
        testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0, anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  zshard_rt_mpi_finalize();
  return anyFailed;
}
