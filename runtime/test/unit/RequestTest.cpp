//===- RequestTest.cpp - Requests completed by a device -------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// A Request of the nccl backend is completed on the waiting thread (it makes
// the compute stream wait for an event) instead of by a progress thread.
// The mechanism is CPU-only C++ (comm/Request.h), tested here without a GPU:
// wait() runs the waiter once, done() asks the query, a request dropped
// without wait() still runs the waiter, and the waiter's failure reaches
// wait().
//
//===----------------------------------------------------------------------===//

#include "comm/Request.h"
#include "core/Failure.h"

#include <gtest/gtest.h>

#include <memory>

using namespace zshard::rt;

namespace {

TEST(DeviceRequest, WaitRunsTheWaiterOnce) {
  int waited = 0;
  bool finished = false;
  Request request(std::make_shared<RequestState>([&] { ++waited; },
                                                 [&] { return finished; }));
  EXPECT_FALSE(request.done());
  finished = true;
  EXPECT_TRUE(request.done());
  request.wait();
  EXPECT_EQ(waited, 1);
  request.wait(); // spent: nothing more
  EXPECT_EQ(waited, 1);
  EXPECT_TRUE(request.done());
}

TEST(DeviceRequest, DroppedRequestStillWaits) {
  int waited = 0;
  {
    Request request(std::make_shared<RequestState>([&] { ++waited; },
                                                   [] { return false; }));
  }
  EXPECT_EQ(waited, 1);
  Request replaced(
      std::make_shared<RequestState>([&] { ++waited; }, [] { return false; }));
  replaced = Request();
  EXPECT_EQ(waited, 2);
}

TEST(DeviceRequest, WaiterFailureReachesWait) {
  Request request(std::make_shared<RequestState>(
      [] { fail("cuda:0: cudaStreamWaitEvent (wait) failed"); },
      [] { return true; }));
  try {
    request.wait();
    FAIL() << "no failure";
  } catch (const Failure &failure) {
    EXPECT_STREQ(failure.what(), "cuda:0: cudaStreamWaitEvent (wait) failed");
  }
}

TEST(DeviceRequest, ThreadCompletedRequestsAreUnchanged) {
  auto state = std::make_shared<RequestState>();
  Request request(state);
  EXPECT_FALSE(request.done());
  state->complete(nullptr);
  EXPECT_TRUE(request.done());
  request.wait();
}

} // namespace
