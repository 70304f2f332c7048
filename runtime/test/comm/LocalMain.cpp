//===- LocalMain.cpp - The conformance suite on the local backend ---------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "CommHarness.h"

using namespace zshard::rt::test;

std::vector<BackendSpec> zshard::rt::test::conformanceBackends() {
  return {{"local", 1}, {"local", 2}, {"local", 3}, {"local", 4}};
}

std::unique_ptr<Harness>
zshard::rt::test::makeHarness(const BackendSpec &spec) {
  return makeLocalHarness(spec.ranks);
}
