//===- RunHeader.h - What a zshard-run run says it runs ---------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The first line of a run (on stderr and in --log): the artifact, its
/// state, the ranks and backend, the data, the lr and the steps; and the
/// names and rates the progress lines and the summary use.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RUNHEADER_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RUNHEADER_H

#include "LrSchedule.h"
#include "Options.h"
#include "Report.h"

#include <cstdint>
#include <string>

namespace zshard::rt {
class BatchSource;
struct Manifest;
} // namespace zshard::rt

namespace zshard::run {

/// "local", "mpi" or "nccl".
const char *backendName(Backend backend);

/// What one step processes, for the progress lines' rate: the global
/// batch's tokens (tok/s) or samples (samples/s), else steps/s.
Throughput throughputOf(const rt::Manifest &manifest, const RunOptions &options,
                        int64_t ranks);

/// "zshard-run: DIR: P parameters (...); R ranks (...); data: ...; lr ...;
/// steps F..L". \p source may be null (a step without batch arguments).
std::string runHeader(const rt::Manifest &manifest, const RunOptions &options,
                      const RunLr &lr, const rt::BatchSource *source,
                      int64_t ranks, int64_t firstStep, int64_t lastStep);

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RUNHEADER_H
