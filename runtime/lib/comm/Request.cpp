//===- Request.cpp - Completion of an asynchronous collective -------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/Request.h"

#include <utility>

using namespace zshard::rt;

RequestState::RequestState(std::function<void()> onWait,
                           std::function<bool()> isDone)
    : onWait(std::move(onWait)), isDone(std::move(isDone)) {}

void RequestState::complete(std::exception_ptr failure) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    finished = true;
    error = std::move(failure);
  }
  finishedCv.notify_all();
}

void RequestState::wait() {
  if (onWait) {
    std::function<void()> waiter = std::move(onWait);
    onWait = nullptr;
    isDone = nullptr;
    finished = true;
    waiter();
    return;
  }
  std::unique_lock<std::mutex> lock(mutex);
  finishedCv.wait(lock, [this] { return finished; });
  if (error)
    std::rethrow_exception(error);
}

bool RequestState::done() const {
  if (isDone)
    return isDone();
  std::lock_guard<std::mutex> lock(mutex);
  return finished;
}

Request::Request(std::shared_ptr<RequestState> state)
    : state(std::move(state)) {}

Request &Request::operator=(Request &&other) noexcept {
  if (this != &other) {
    waitQuietly();
    state = std::move(other.state);
  }
  return *this;
}

Request::~Request() { waitQuietly(); }

void Request::wait() {
  if (!state)
    return;
  std::shared_ptr<RequestState> pending = std::move(state);
  pending->wait();
}

bool Request::done() const { return !state || state->done(); }

void Request::waitQuietly() noexcept {
  try {
    wait();
  } catch (...) {
  }
}
