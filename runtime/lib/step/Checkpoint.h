//===- Checkpoint.h - Step state from init specs and files ------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The state of a step (its param and opt_state arguments, and in a sharded
/// step the param_shard and opt_state_shard arguments of its units) comes
/// from the init specs, from a parameter file (--init-from), or from a
/// checkpoint (--resume), and is saved as a checkpoint (--save).
///
/// Consolidated files are safetensors with one tensor per parameter of the
/// model under its name and one per optimizer state under its name
/// (<param>.exp_avg, <param>.exp_avg_sq for AdamW), and the step of the last
/// update in __metadata__ "step", as python/zshard_ref writes them, so each
/// reads the other's files. A sharded step reads and writes the same files:
/// each member of a unit is one tensor, each rank taking the piece of it
/// inside its shard, so any rank count reads any consolidated file.
///
/// Rank files (--save of a sharded run) hold one rank's state arguments by
/// argument name, without gathering, and metadata naming the rank, the rank
/// count and the unit layout; they load back into the same layout only.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_CHECKPOINT_H
#define ZSHARD_RUNTIME_LIB_STEP_CHECKPOINT_H

#include "step/Manifest.h"
#include "step/StepBuffers.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zshard::rt {

/// Where a rank sits: its rank, the rank count and its grid coordinates
/// (none for an unsharded artifact).
struct RankPlace {
  int64_t rank = 0;
  int64_t ranks = 1;
  std::vector<int64_t> coords;

  /// Rank \p rank of the manifest's grid (row-major coordinates).
  static RankPlace of(const Manifest &manifest, int64_t rank);
};

/// One tensor of the consolidated state, as an unsharded run holds and saves
/// it: a param or opt_state argument, or a member of a sharded unit (its
/// parameter or its state in one slot).
struct StateTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t elements = 0;
  bool isParam = true;
  /// A buffer argument (isParam is false): read from a parameter file when
  /// there, else built from its init spec; checkpoints hold it only when
  /// persistent.
  bool isBuffer = false;
  bool persistent = true;
  /// The argument that holds it: itself, or the unit's param_shard or
  /// opt_state_shard argument.
  const ArgumentDesc *argument = nullptr;
  /// Members of sharded units only.
  const UnitDesc *unit = nullptr;
  const UnitMember *member = nullptr;
  const UnitSlot *slot = nullptr; ///< The slot, for optimizer state.
  size_t memberIndex = 0;
  const InitSpec *init = nullptr;
};

/// The consolidated state: parameters and buffers first (in argument order,
/// the members of a unit in member order), then optimizer state (likewise).
std::vector<StateTensor> stateTensors(const Manifest &manifest);

/// The part of a member inside one shard: member elements [begin, end) at
/// element shardOffset of the shard.
struct ShardPiece {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t shardOffset = 0;
};

/// The piece of \p member (of \p unit) inside shard \p shard; begin == end
/// when the shard holds none of it.
ShardPiece shardPiece(const UnitDesc &unit, const UnitMember &member,
                      uint64_t shard);

/// Initialises every state argument from its init spec, under run seed
/// \p seed (core/InitSpec.h); shard arguments get this rank's pieces of
/// their members (the same values an unsharded run gives those elements)
/// and zero padding.
void initFromSpecs(const Manifest &manifest, StepBuffers &buffers,
                   uint64_t seed, const RankPlace &place = RankPlace());

/// Initialises the non-persistent buffers (those no checkpoint holds) from
/// their init specs; loadRankState leaves them to this.
void initDerivedBuffers(const Manifest &manifest, StepBuffers &buffers,
                        uint64_t seed, const RankPlace &place = RankPlace());
/// How loadState treats a file.
enum class StateFile {
  /// --init-from: every param must be there; each opt_state is taken from
  /// the file when there, else from its init spec; "step" is not read.
  Parameters,
  /// --resume: every param and every opt_state must be there, and the
  /// metadata must give the step of the last update.
  Checkpoint
};

/// Fills the state arguments from the consolidated safetensors file \p path.
/// Tensors must have their state tensor's shape and a dtype readable as its
/// dtype (io/TensorConvert.h); a tensor that is neither a param nor an
/// opt_state is an error. Returns the metadata "step" for
/// StateFile::Checkpoint, else 0. Throws a Failure naming \p path.
int64_t loadState(const Manifest &manifest, StepBuffers &buffers,
                  const std::string &path, StateFile kind, uint64_t seed,
                  const RankPlace &place = RankPlace());

/// Writes every param and opt_state (from the argument buffers) in their
/// dtypes, params first, with __metadata__ {"step": "<step>", "producer":
/// "zshard-run", "signature": ..., and "model" when the module names one}.
/// For an unsharded step only (saveFullState for a sharded one).
void saveState(const Manifest &manifest, const StepBuffers &buffers,
               const std::string &path, int64_t step);

/// Writes the consolidated state of a sharded step: \p units holds, for the
/// index of every shard argument, its whole padded buffer (all shards in
/// order, gathered from the ranks); other state arguments come from
/// \p buffers. The tensors and their order are stateTensors(); the metadata
/// that of saveState plus "ranks".
void saveFullState(const Manifest &manifest, const StepBuffers &buffers,
                   const std::map<int64_t, std::vector<unsigned char>> &units,
                   const std::string &path, int64_t step);

/// Where the whole of \p t is in the consolidated state: its argument's
/// buffer in \p buffers, or (a member of a sharded unit) its place in the
/// unit's gathered buffer in \p units, as saveFullState takes them.
const void *
consolidatedData(const StateTensor &t, const StepBuffers &buffers,
                 const std::map<int64_t, std::vector<unsigned char>> &units,
                 const std::string &path);

/// The rank file of rank \p rank of \p ranks for --save/--resume \p base:
/// "<base>.rank<r>-of-<N>.safetensors", a trailing ".safetensors" of
/// \p base left out.
std::string rankFilePath(const std::string &base, int64_t rank, int64_t ranks);

/// The unit layout a rank file records (grid shape, units with strategies,
/// sizes, dtypes, members and slots) as compact JSON.
std::string unitLayoutJson(const Manifest &manifest);

/// Writes this rank's state arguments by argument name (params and param
/// shards first, then optimizer state), with __metadata__ {"step", "rank",
/// "ranks", "layout", "producer", "signature", and "model" when named}.
void saveRankState(const Manifest &manifest, const StepBuffers &buffers,
                   const std::string &path, int64_t step,
                   const RankPlace &place);

/// Reads a rank file written by saveRankState for the same rank, rank count
/// and unit layout: every state argument must be there with its shape and a
/// readable dtype. Returns the metadata "step".
int64_t loadRankState(const Manifest &manifest, StepBuffers &buffers,
                      const std::string &path, const RankPlace &place);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_CHECKPOINT_H
