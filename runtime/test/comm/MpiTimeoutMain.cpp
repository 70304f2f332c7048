//===- MpiTimeoutMain.cpp - an MPI rank that does not join in time --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Two MPI processes; rank 0 runs an all-gather (blocking, or started and then
// waited with "started" as the argument), rank 1 is alive but stuck: it sleeps
// 90 s before joining. With ZSHARD_COLLECTIVE_TIMEOUT_S=2, rank 0 must print
// the timeout line and abort the job (status 70) after about 2 s, taking rank
// 1 with it; CheckMpiTimeout.cmake checks the status, the line and the time.
//
//===----------------------------------------------------------------------===//

#include "comm/mpi/MpiCommunicator.h"

#include "zshard/runtime/zshard_rt.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

using namespace zshard::rt;

int main(int argc, char **argv) {
  if (zshard_rt_mpi_init(&argc, &argv) != ZSHARD_RT_OK) {
    std::fprintf(stderr, "%s\n", zshard_rt_last_error_message());
    return 1;
  }
  bool started = argc > 1 && std::strcmp(argv[1], "started") == 0;
  MpiCommunicator comm(MPI_COMM_WORLD);
  if (comm.size() != 2) {
    std::fprintf(stderr, "run with 2 processes\n");
    return 1;
  }
  if (comm.rank() == 1)
    std::this_thread::sleep_for(std::chrono::seconds(90));
  float send[2] = {float(comm.rank()), 1.0f};
  float recv[4] = {0, 0, 0, 0};
  if (started) {
    Request request = comm.startAllGather(send, recv, 2, CommDType::F32);
    request.wait();
  } else {
    comm.allGather(send, recv, 2, CommDType::F32);
  }
  std::printf("rank %d: the all-gather returned without the timeout\n",
              comm.rank());
  zshard_rt_mpi_finalize();
  return 2;
}
