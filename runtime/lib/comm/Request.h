//===- Request.h - Completion of an asynchronous collective -----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A Request stands for a collective started with Communicator::start*(): it
/// runs on the communicator's progress thread while the caller computes, and
/// wait() blocks until it has finished (rethrowing its failure, if any).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_REQUEST_H
#define ZSHARD_RUNTIME_LIB_COMM_REQUEST_H

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>

namespace zshard::rt {

/// What a Request and the thread that runs its collective share.
class RequestState {
public:
  /// A collective run by a thread, which calls complete().
  RequestState() = default;
  /// A collective already queued on a device (NCCL): the first wait() runs
  /// \p onWait on the waiting thread instead of blocking (e.g. makes the
  /// compute stream wait for the collective's event), and done() asks
  /// \p isDone. complete() is never called.
  RequestState(std::function<void()> onWait, std::function<bool()> isDone);

  /// Marks the collective finished (with \p error when it failed) and wakes
  /// the waiters.
  void complete(std::exception_ptr error);
  /// Blocks until complete() was called; rethrows its error.
  void wait();
  bool done() const;

private:
  std::function<void()> onWait;
  std::function<bool()> isDone;
  mutable std::mutex mutex;
  std::condition_variable finishedCv;
  bool finished = false;
  std::exception_ptr error;
};

/// A started collective. Move-only. Its buffers belong to the collective until
/// wait() returns.
class Request {
public:
  /// A request that is already complete.
  Request() = default;
  explicit Request(std::shared_ptr<RequestState> state);
  Request(Request &&other) noexcept = default;
  /// Waits for the request being replaced (dropping its failure).
  Request &operator=(Request &&other) noexcept;
  Request(const Request &) = delete;
  Request &operator=(const Request &) = delete;
  /// Waits when still pending (dropping its failure): the buffers must not be
  /// freed under a running collective.
  ~Request();

  /// Blocks until the collective has finished and rethrows its failure (a
  /// zshard::rt::Failure). Later calls return at once.
  void wait();
  /// Whether wait() would return without blocking.
  bool done() const;

private:
  void waitQuietly() noexcept;

  std::shared_ptr<RequestState> state;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_REQUEST_H
