//===- LocalHarness.cpp - Test bodies on the local backend's threads ------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "CommHarness.h"

#include "comm/local/LocalWorld.h"

#include <exception>
#include <thread>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

/// Runs body(r) on threads 0..n-1; a rank's exception fails the test.
template <typename Body>
std::vector<uint64_t> onThreads(int n, const Body &body) {
  std::vector<uint64_t> values(size_t(n), 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        values[size_t(r)] = body(r);
      } catch (const std::exception &error) {
        ADD_FAILURE() << "rank " << r << " threw: " << error.what();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  return values;
}

class LocalHarness final : public Harness {
public:
  LocalHarness(int ranks, EmulatedLink link) : ranks(ranks), link(link) {}

  int size() const override { return ranks; }
  const char *backend() const override { return "local"; }

  std::vector<uint64_t>
  run(const std::function<uint64_t(Communicator &)> &body) override {
    LocalWorld world(ranks, link);
    return onThreads(ranks, [&](int r) { return body(world.communicator(r)); });
  }

  std::vector<uint64_t>
  runC(const std::function<uint64_t(zshard_rt_comm *)> &body) override {
    zshard_rt_local_world *world = nullptr;
    EXPECT_EQ(zshard_rt_local_world_create(ranks, link.linkGbps,
                                           link.linkLatencyUs, &world),
              ZSHARD_RT_OK)
        << zshard_rt_last_error_message();
    if (!world)
      return std::vector<uint64_t>(size_t(ranks), 0);
    std::vector<uint64_t> values = onThreads(ranks, [&](int r) {
      zshard_rt_comm *comm = nullptr;
      EXPECT_EQ(zshard_rt_local_world_comm(world, r, &comm), ZSHARD_RT_OK);
      return body(comm);
    });
    zshard_rt_local_world_destroy(world);
    return values;
  }

private:
  int ranks;
  EmulatedLink link;
};

} // namespace

std::unique_ptr<Harness> zshard::rt::test::makeLocalHarness(int ranks,
                                                            EmulatedLink link) {
  return std::make_unique<LocalHarness>(ranks, link);
}

std::string zshard::rt::test::backendSpecName(
    const testing::TestParamInfo<BackendSpec> &info) {
  if (info.param.backend == "local")
    return "local_" + std::to_string(info.param.ranks);
  return info.param.backend;
}
