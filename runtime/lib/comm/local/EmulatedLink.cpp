//===- EmulatedLink.cpp - A modelled network for the local backend --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/local/EmulatedLink.h"

#include "core/Failure.h"

#include <cmath>
#include <string>

using namespace zshard::rt;

void EmulatedLink::check() const {
  if (!std::isfinite(linkGbps) || linkGbps < 0)
    fail("emulated link: linkGbps " + std::to_string(linkGbps) +
         " is not a finite bandwidth >= 0");
  if (!std::isfinite(linkLatencyUs) || linkLatencyUs < 0)
    fail("emulated link: linkLatencyUs " + std::to_string(linkLatencyUs) +
         " is not a finite latency >= 0");
}

double EmulatedLink::wireBytes(const Collective &collective, int groupSize) {
  const double n = groupSize;
  double size = double(collective.count) * commDTypeSize(collective.dtype);
  switch (collective.kind) {
  case Collective::Kind::AllGather:
  case Collective::Kind::ReduceScatter:
    return (n - 1) * size; // (N-1)/N of the N * count elements
  case Collective::Kind::AllReduce:
    return 2 * (n - 1) / n * size;
  case Collective::Kind::Barrier:
    return 0;
  }
  return 0;
}

double EmulatedLink::seconds(const Collective &collective,
                             int groupSize) const {
  if (!enabled() || groupSize <= 1)
    return 0;
  double time = linkLatencyUs * 1e-6;
  if (linkGbps > 0)
    time += wireBytes(collective, groupSize) * 8 / (linkGbps * 1e9);
  return time;
}
