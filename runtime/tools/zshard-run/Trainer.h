//===- Trainer.h - The training loop of zshard-run --------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_TRAINER_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_TRAINER_H

#include "Options.h"

namespace zshard::run {

/// Loads the artifact, initialises or loads the state, runs the steps,
/// reports and saves, as \p options say. Throws a Failure (from
/// core/Failure.h) for any bad input.
void train(const RunOptions &options);

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_TRAINER_H
