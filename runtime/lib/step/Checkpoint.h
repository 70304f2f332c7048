//===- Checkpoint.h - Step state from init specs and files ------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The state of a step (its param and opt_state arguments) comes from the
/// init specs, from a parameter file (--init-from), or from a checkpoint
/// (--resume), and is saved as a checkpoint (--save). Files are safetensors
/// with one tensor per param under its name and one per opt_state under its
/// name (<param>.exp_avg, <param>.exp_avg_sq for AdamW), and the step of the
/// last update in __metadata__ "step", as python/zshard_ref writes them, so
/// each reads the other's files.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_CHECKPOINT_H
#define ZSHARD_RUNTIME_LIB_STEP_CHECKPOINT_H

#include "step/Manifest.h"
#include "step/StepBuffers.h"

#include <cstdint>
#include <string>

namespace zshard::rt {

/// Initialises every param and opt_state argument from its init spec, under
/// run seed \p seed (core/InitSpec.h).
void initFromSpecs(const Manifest &manifest, StepBuffers &buffers,
                   uint64_t seed);

/// How loadState treats a file.
enum class StateFile {
  /// --init-from: every param must be there; each opt_state is taken from
  /// the file when there, else from its init spec; "step" is not read.
  Parameters,
  /// --resume: every param and every opt_state must be there, and the
  /// metadata must give the step of the last update.
  Checkpoint
};

/// Fills the param and opt_state arguments from the safetensors file
/// \p path. Tensors must have their argument's shape and a dtype readable as
/// its dtype (io/TensorConvert.h); a tensor that is neither a param nor an
/// opt_state is an error. Returns the metadata "step" for
/// StateFile::Checkpoint, else 0. Throws a Failure naming \p path.
int64_t loadState(const Manifest &manifest, StepBuffers &buffers,
                  const std::string &path, StateFile kind, uint64_t seed);

/// Writes every param and opt_state (from the argument buffers) in their
/// dtypes, params first, with __metadata__ {"step": "<step>", "producer":
/// "zshard-run", "signature": ..., and "model" when the module names one}.
void saveState(const Manifest &manifest, const StepBuffers &buffers,
               const std::string &path, int64_t step);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_CHECKPOINT_H
