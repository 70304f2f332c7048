//===- RunChecks.h - Whether an artifact fits a zshard-run run --*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the launcher and every rank check of the artifact before running it,
/// and the text of the artifact's grid their messages share.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RUNCHECKS_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RUNCHECKS_H

#include "Options.h"

#include "step/Manifest.h"

#include <cstdint>
#include <string>

namespace zshard::run {

/// The artifact's grid, for messages: "grid 'NAME' [2, 4]", or "no grid".
std::string gridText(const rt::Manifest &manifest);

/// The rank count of the artifact must be the run's: \p ranks (--ranks, or
/// the MPI world's size; 0 = take the artifact's).
void checkRanks(const rt::Manifest &manifest, const RunOptions &options,
                int64_t ranks);

/// The artifact's target must be the run's --device: a CUDA step calls the
/// GPU host ABI on device buffers, a CPU step reads its buffers on the host.
/// A manifest without a target is not checked.
void checkTarget(const rt::Manifest &manifest, const RunOptions &options);

/// Every hyper argument must be one zshard-run supplies, as a float scalar.
void checkHypers(const rt::Manifest &manifest);

/// Fails now, not after the run, when \p path cannot be written: its
/// directory must exist and be writable.
void checkWritable(const std::string &path);

bool fileExists(const std::string &path);

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_RUNCHECKS_H
