//===- ProgressQueue.cpp - A communicator's progress thread ---------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/ProgressQueue.h"

using namespace zshard::rt;

ProgressQueue::ProgressQueue() : worker([this] { loop(); }) {}

ProgressQueue::~ProgressQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wakeCv.notify_one();
  worker.join();
}

std::shared_ptr<RequestState>
ProgressQueue::submit(std::function<void()> task) {
  auto state = std::make_shared<RequestState>();
  {
    std::lock_guard<std::mutex> lock(mutex);
    queue.emplace_back(std::move(task), state);
  }
  wakeCv.notify_one();
  return state;
}

void ProgressQueue::drain() {
  std::unique_lock<std::mutex> lock(mutex);
  idleCv.wait(lock, [this] { return queue.empty() && !running; });
}

void ProgressQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    wakeCv.wait(lock, [this] { return stopping || !queue.empty(); });
    if (queue.empty())
      return; // stopping, and nothing left to run
    Task task = std::move(queue.front());
    queue.pop_front();
    running = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      task.first();
    } catch (...) {
      error = std::current_exception();
    }
    task.second->complete(error);
    lock.lock();
    running = false;
    if (queue.empty())
      idleCv.notify_all();
  }
}
