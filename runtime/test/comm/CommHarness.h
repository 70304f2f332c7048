//===- CommHarness.h - A test body on every rank of a backend ---*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The conformance suite is one set of test cases; a Harness runs a case's
/// body on every rank of one backend: the local backend's N threads, or this
/// process as one rank of an MPI job (every process runs the same cases).
/// Each rank's body returns a 64-bit value (usually a digest of its results);
/// run() returns the values of all ranks, in rank order, on every rank, so a
/// case can check that ranks agree.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TEST_COMM_COMMHARNESS_H
#define ZSHARD_RUNTIME_TEST_COMM_COMMHARNESS_H

#include "comm/Communicator.h"
#include "comm/local/EmulatedLink.h"

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace zshard::rt::test {

struct BackendSpec {
  std::string backend; ///< "local" or "mpi"
  int ranks;           ///< for local; MPI takes the job's size
};

/// How GoogleTest prints a parameter: "local with 3 ranks", "mpi".
inline void PrintTo(const BackendSpec &spec, std::ostream *out) {
  *out << spec.backend;
  if (spec.backend == "local")
    *out << " with " << spec.ranks << " ranks";
}

class Harness {
public:
  virtual ~Harness() = default;
  virtual int size() const = 0;
  virtual const char *backend() const = 0;

  /// Runs \p body on every rank with its C++ communicator.
  virtual std::vector<uint64_t>
  run(const std::function<uint64_t(Communicator &)> &body) = 0;

  /// Runs \p body on every rank with its C ABI communicator (each rank on its
  /// own thread, as a launcher would run compiled steps).
  virtual std::vector<uint64_t>
  runC(const std::function<uint64_t(zshard_rt_comm *)> &body) = 0;
};

/// \p ranks threads; a new LocalWorld (with \p link) for every run.
std::unique_ptr<Harness> makeLocalHarness(int ranks, EmulatedLink link = {});

/// Defined by each test program's main file: the backends it runs the suite
/// on (evaluated before main; MPI's size is only known later), and the
/// harness of each.
std::vector<BackendSpec> conformanceBackends();
std::unique_ptr<Harness> makeHarness(const BackendSpec &spec);

/// Test name suffix: "local_3", "mpi".
std::string backendSpecName(const testing::TestParamInfo<BackendSpec> &info);

} // namespace zshard::rt::test

#endif // ZSHARD_RUNTIME_TEST_COMM_COMMHARNESS_H
