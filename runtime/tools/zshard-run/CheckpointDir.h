//===- CheckpointDir.h - Periodic checkpoints in one directory --*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// --checkpoint-dir D keeps a run's checkpoints as D/step-<8 digits>/, each
/// holding the state of one step: `state.safetensors` (consolidated) or
/// `state.rank<r>-of-<N>.safetensors` (one file per rank). A checkpoint is
/// written into D/.tmp-step-<step>/ and renamed into place once every rank
/// has written its file, so a step-* directory is always complete; D/latest
/// names the newest. Anything named .tmp-* is a save a killed run left
/// behind, removed when the next run starts. Older checkpoints beyond
/// --keep are renamed to .tmp-* before they are deleted, for the same
/// reason.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_CHECKPOINTDIR_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_CHECKPOINTDIR_H

#include <cstdint>
#include <optional>
#include <string>

namespace zshard::run {

/// How a checkpoint holds the state (--save-format).
enum class CheckpointFormat { Rank, Full };

/// One complete checkpoint of a directory.
struct SavedCheckpoint {
  int64_t step = 0;
  /// D/step-<step>.
  std::string path;
  /// Rank files (state.rank<r>-of-<N>) rather than one consolidated file.
  bool rankFiles = false;

  /// The consolidated file, or the base name of the rank files.
  std::string statePath() const { return path + "/" + stateFileBase(); }
  static std::string stateFileBase() { return "state.safetensors"; }
};

/// The checkpoints of one directory. Only one rank (the lead) changes the
/// directory; every rank writes its own files into a staging directory the
/// lead made.
class CheckpointDir {
public:
  /// \p keep: how many checkpoints to keep (0: all).
  CheckpointDir(std::string dir, int64_t keep)
      : dir(std::move(dir)), keep(keep) {}

  /// Creates the directory if needed and removes what killed saves left
  /// (.tmp-*). Throws a Failure naming the directory on error.
  void prepare() const;
  /// The newest complete checkpoint, if there is one.
  std::optional<SavedCheckpoint> newest() const;
  /// D/.tmp-step-<step>: where the ranks write the checkpoint of \p step.
  std::string stagingPath(int64_t step) const;
  /// Makes stagingPath(step) an empty directory.
  void beginSave(int64_t step) const;
  /// Renames the staging directory of \p step into place, points D/latest
  /// at it and removes the checkpoints beyond --keep; returns the
  /// checkpoint's directory.
  std::string publish(int64_t step) const;

  /// "step-00000012".
  static std::string stepName(int64_t step);
  const std::string &path() const { return dir; }

private:
  std::string dir;
  int64_t keep;
};

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_CHECKPOINTDIR_H
