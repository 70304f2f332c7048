//===- NcclTest.cpp - The nccl backend on one and two GPUs ----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// requires-gpu. The NCCL communicator through the C ABI and the step
// collectives, with device buffers (ordered with the compute stream by
// events) and host buffers (staged): on a world of one rank (no rendezvous
// variables), and, where two GPUs exist, two processes of this executable
// meeting through the file rendezvous (ZSHARD_RANK, ZSHARD_WORLD_SIZE,
// ZSHARD_NCCL_ID_FILE, ZSHARD_LOCAL_RANK).
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using zshard::test::GpuFixture;

namespace {

/// The NCCL communicator of this process and a one-axis grid over it,
/// current on the test's thread with the device and the context.
class Nccl : public GpuFixture {
protected:
  void SetUp() override {
    GpuFixture::SetUp();
    if (HasFatalFailure())
      return;
    ASSERT_EQ(zshard_rt_nccl_comm_create(device, &comm), ZSHARD_RT_OK)
        << zshard_rt_last_error_message();
    ASSERT_EQ(zshard_rt_comm_rank(comm, &rank), ZSHARD_RT_OK);
    ASSERT_EQ(zshard_rt_comm_size(comm, &size), ZSHARD_RT_OK);
    int64_t shape[] = {size};
    ASSERT_EQ(zshard_rt_grid_create(comm, 1, shape, &grid), ZSHARD_RT_OK)
        << zshard_rt_last_error_message();
    zshard_rt_set_current_mem_ctx(ctx);
    zshard_rt_set_current_device(device);
    zshard_rt_set_current_grid(grid);
  }
  void TearDown() override {
    zshard_rt_set_current_grid(nullptr);
    zshard_rt_grid_destroy(grid);
    zshard_rt_comm_destroy(comm);
    GpuFixture::TearDown();
  }

  /// Every collective of the step ABI with device and host buffers.
  void exerciseCollectives() {
    const int64_t n = 1000;
    std::vector<float> mine(n);
    for (int64_t i = 0; i < n; ++i)
      mine[size_t(i)] = float(rank * 10000 + i);
    // all-gather, blocking and started
    float *send = upload(mine);
    std::vector<float> zeros(size_t(n * size), -1.0f);
    float *recv = upload(zeros);
    zshard_rt_step_all_gather(1, send, recv, n, ZSHARD_RT_COMM_F32);
    std::vector<float> gathered = download(recv, size_t(n * size));
    for (int r = 0; r < size; ++r)
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(gathered[size_t(r * n + i)], float(r * 10000 + i));
    float *recv2 = upload(zeros);
    int64_t handle =
        zshard_rt_step_all_gather_start(1, send, recv2, n, ZSHARD_RT_COMM_F32);
    EXPECT_EQ(zshard_rt_step_pending_collectives(), 1);
    zshard_rt_step_wait(handle);
    EXPECT_EQ(download(recv2, size_t(n * size)), gathered);

    // reduce-scatter (sum) in place: the result at the front
    std::vector<float> full(size_t(n * size));
    for (int64_t i = 0; i < n * size; ++i)
      full[size_t(i)] = float(i % 97) + float(rank);
    float *buffer = upload(full);
    zshard_rt_step_reduce_scatter(1, buffer, buffer, n, ZSHARD_RT_COMM_F32,
                                  ZSHARD_RT_REDUCE_SUM);
    std::vector<float> scattered = download(buffer, size_t(n));
    float rankSum = float(size * (size - 1) / 2);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(scattered[size_t(i)],
                float(size) * float((rank * n + i) % 97) + rankSum)
          << i;

    // all-reduce (avg) of bf16: 1.0 and 3.0 average to 2.0 exactly
    std::vector<uint16_t> half(64, uint16_t(rank % 2 ? 0x4040 : 0x3f80));
    uint16_t *dHalf = upload(half);
    zshard_rt_step_all_reduce(1, dHalf, dHalf, 64, ZSHARD_RT_COMM_BF16,
                              ZSHARD_RT_REDUCE_AVG);
    uint16_t expected = size == 1 ? 0x3f80 : 0x4000;
    EXPECT_EQ(download(dHalf, 64), std::vector<uint16_t>(64, expected));

    // host buffers are staged through device memory
    std::vector<int32_t> hostSend(3, rank + 1), hostRecv(3, 0);
    zshard_rt_step_all_reduce(1, hostSend.data(), hostRecv.data(), 3,
                              ZSHARD_RT_COMM_I32, ZSHARD_RT_REDUCE_SUM);
    EXPECT_EQ(hostRecv, std::vector<int32_t>(3, size * (size + 1) / 2));
    EXPECT_EQ(live(ZSHARD_RT_MEM_COMMUNICATION), 0u);

    for (void *ptr : {static_cast<void *>(send), static_cast<void *>(recv),
                      static_cast<void *>(recv2), static_cast<void *>(buffer),
                      static_cast<void *>(dHalf)})
      release(ptr);
  }

  zshard_rt_comm *comm = nullptr;
  zshard_rt_grid *grid = nullptr;
  int32_t rank = 0, size = 1;
};

TEST_F(Nccl, CollectivesOnOneRank) {
  if (std::getenv("ZSHARD_TEST_NCCL_CHILD"))
    GTEST_SKIP() << "a rank of TwoProcesses";
  EXPECT_EQ(size, 1);
  exerciseCollectives();
}

TEST_F(Nccl, ChildRank) {
  if (!std::getenv("ZSHARD_TEST_NCCL_CHILD"))
    GTEST_SKIP() << "runs as a rank of NcclTwoProcesses.Run";
  EXPECT_EQ(size, 2);
  exerciseCollectives();
}

TEST(NcclTwoProcesses, Run) {
  int count = 0;
  ASSERT_EQ(zshard_rt_cuda_device_count(&count), ZSHARD_RT_OK);
  if (count < 2)
    GTEST_SKIP() << "needs two GPUs";
  if (std::getenv("ZSHARD_TEST_NCCL_CHILD"))
    GTEST_SKIP();
  std::string idFile = ::testing::TempDir() + "zshard-nccl-test-" +
                       std::to_string(static_cast<long>(getpid()));
  std::vector<pid_t> children;
  for (int r = 0; r < 2; ++r) {
    std::vector<std::string> env;
    for (char **e = environ; *e; ++e)
      env.push_back(*e);
    env.push_back("ZSHARD_TEST_NCCL_CHILD=1");
    env.push_back("ZSHARD_RANK=" + std::to_string(r));
    env.push_back("ZSHARD_WORLD_SIZE=2");
    env.push_back("ZSHARD_LOCAL_RANK=" + std::to_string(r));
    env.push_back("ZSHARD_NCCL_ID_FILE=" + idFile);
    std::vector<char *> envp;
    for (std::string &s : env)
      envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string self = "/proc/self/exe",
                filter = "--gtest_filter=Nccl.ChildRank";
    char *argv[] = {self.data(), filter.data(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(
        posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()),
        0);
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "a rank failed (status " << status << ")";
  }
}

} // namespace
