//===- ProgressQueue.h - A communicator's progress thread -------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One thread that runs a communicator's started collectives, one at a time,
/// in the order they were started, while the thread that started them goes on
/// computing. That is what makes a start*() overlap with compute on every
/// backend: the transfer really proceeds, it is not deferred to wait().
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_PROGRESSQUEUE_H
#define ZSHARD_RUNTIME_LIB_COMM_PROGRESSQUEUE_H

#include "comm/Request.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace zshard::rt {

class ProgressQueue {
public:
  /// Starts the thread.
  ProgressQueue();
  /// Runs what is still queued, then joins the thread.
  ~ProgressQueue();
  ProgressQueue(const ProgressQueue &) = delete;
  ProgressQueue &operator=(const ProgressQueue &) = delete;

  /// Queues \p task; its state completes when it has run (with what it threw).
  std::shared_ptr<RequestState> submit(std::function<void()> task);

  /// Blocks until every task submitted so far has run.
  void drain();

private:
  void loop();

  using Task = std::pair<std::function<void()>, std::shared_ptr<RequestState>>;

  std::mutex mutex;
  std::condition_variable wakeCv;
  std::condition_variable idleCv;
  std::deque<Task> queue;
  bool running = false;
  bool stopping = false;
  std::thread worker;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_PROGRESSQUEUE_H
