//===- BatchSource.h - Where the batch of each step comes from --*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A BatchSource fills the batch arguments of a step for a given global step
/// (1-based). What it writes depends only on the run seed, the step and the
/// rank's place in the world, never on what came before, so a resumed run
/// sees exactly the batches an uninterrupted one would.
///
/// The sources (docs/runtime.md, "Data"):
///  - TokenFileSource (--data): windows of a flat token file, for GPT steps;
///  - BatchFileSource (--batch-file): tensors by argument name, optionally
///    with a leading step axis, as zshard_ref's --batch-file;
///  - SyntheticGptSource / SyntheticMlpSource (neither): learnable built-in
///    data for demos;
///  - no source at all for a step without batch arguments.
///
/// Each rank owns rows [rank * B, (rank + 1) * B) of a global batch of
/// world * B rows, where B is the batch dimension of its own arguments; row g
/// of the global batch is drawn for g alone.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_DATA_BATCHSOURCE_H
#define ZSHARD_RUNTIME_LIB_DATA_BATCHSOURCE_H

#include "core/DType.h"
#include "step/Manifest.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zshard::rt {

/// This process's part of the global batch.
struct DataShard {
  int rank = 0;
  int world = 1;
};

/// What the command line says about data.
struct DataOptions {
  std::string tokenFile;         ///< --data
  DType tokenDType = DType::U16; ///< --data-dtype (u16 or u32)
  /// --data-inputs: the batch arguments a token file feeds (empty: by
  /// name, see gptBatchNames).
  std::string tokenInputs, tokenTargets;
  std::string batchFile;         ///< --batch-file
  uint64_t seed = 0;             ///< --seed
  DataShard shard;
  /// A token file's windows in file order instead of shuffled per epoch
  /// (--eval-data).
  bool inOrder = false;
};

/// Fills batch arguments. \p outputs of fill() are in the order of the
/// arguments the source was made for (batchArguments() of the manifest).
class BatchSource {
public:
  virtual ~BatchSource() = default;
  /// Fills every batch argument for global step \p step (1-based).
  virtual void fill(int64_t step, const std::vector<void *> &outputs) = 0;
  /// One line for people: "synthetic gpt (vocab 64, seed 0)".
  virtual std::string describe() const = 0;
};

/// The batch arguments of \p manifest in index order.
std::vector<const ArgumentDesc *> batchArguments(const Manifest &manifest);

/// The batch arguments of a causal LM (GPT) step: the token window
/// ("tokens") and the window shifted by one ("targets"), integer [B, T] of
/// one shape, and nothing else.
struct GptBatch {
  const ArgumentDesc *tokens = nullptr;
  const ArgumentDesc *targets = nullptr;
  int64_t batch = 0;
  int64_t length = 0;
};

/// The (inputs, targets) names a GPT step's batch is recognised by:
/// tokens/targets (zshard-gen), idx/targets (nanoGPT), input_ids/targets,
/// inputs/targets, x/y.
extern const std::pair<const char *, const char *> gptBatchNames[5];

/// The GPT batch of \p manifest: exactly two batch arguments, named by one
/// of gptBatchNames, integer [B, T] of one shape.
std::optional<GptBatch> matchGptBatch(const Manifest &manifest);

/// The GPT batch --data feeds: batch arguments \p inputs and \p targets
/// (--data-inputs), or, when \p inputs is empty, matchGptBatch(). Throws a
/// Failure saying why the step's batch cannot be fed.
GptBatch tokenFileBatch(const Manifest &manifest, const std::string &file,
                        const std::string &inputs, const std::string &targets);

/// The batch arguments of an MLP step: x, float [B, d_in], and either target,
/// float [B, d_out], or labels, integer [B]; nothing else.
struct MlpBatch {
  const ArgumentDesc *x = nullptr;
  const ArgumentDesc *target = nullptr; ///< Or NULL.
  const ArgumentDesc *labels = nullptr; ///< Or NULL.
  int64_t batch = 0;
};
std::optional<MlpBatch> matchMlpBatch(const Manifest &manifest);

/// The vocabulary of a step: the rows of its token embedding table.
struct Vocabulary {
  int64_t size = 0;
  std::string table; ///< The parameter: "wte", "transformer.wte.weight", ...
};

/// The step's token embedding table: a parameter [V, D] named "wte" or
/// ending in "wte.weight", "embed_tokens.weight", "tok_embeddings.weight",
/// "word_embeddings.weight" or "embed_in.weight" (the first such).
std::optional<Vocabulary> manifestVocabulary(const Manifest &manifest);

/// The vocabulary size: manifestVocabulary()'s.
std::optional<int64_t> manifestVocab(const Manifest &manifest);

/// The source for \p manifest under \p options; NULL when the step has no
/// batch arguments (and no file was given). Throws a Failure when the files
/// are bad or no source fits the step.
std::unique_ptr<BatchSource> makeBatchSource(const Manifest &manifest,
                                             const DataOptions &options);

/// The 64-bit key of the data stream \p domain under run seed \p seed:
/// FNV-1a over the bytes of \p domain, then over the 8 little-endian bytes
/// of \p seed.
uint64_t dataKey(std::string_view domain, uint64_t seed);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_DATA_BATCHSOURCE_H
