//===- SyntheticData.h - Built-in learnable data for demos ------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Data a model can learn, for runs without --data or --batch-file.
///
/// GPT: a fixed random cycle through the whole vocabulary, so every token has
/// exactly one successor and a model can drive the loss towards zero. The
/// cycle is a Fisher-Yates shuffle perm of 0..V-1 drawn with
/// CounterRng(dataKey("zshard.data.cycle", seed), 0) (swap i with
/// below(i, i + 1), i from V-1 down to 1); the successor of perm[i] is
/// perm[(i + 1) mod V]. Row g of step s starts at cycle position
/// p = CounterRng(dataKey("zshard.data.start", seed), s).below(g, V):
/// tokens[t] = perm[(p + t) mod V], targets[t] = perm[(p + t + 1) mod V].
///
/// MLP: x[g, j] = CounterRng(dataKey("zshard.data.x", seed), s)
/// .normal(g * d_in + j); a fixed teacher W[j, k] = CounterRng(
/// dataKey("zshard.data.teacher", seed), 0).normal(j * d_out + k) /
/// sqrt(d_in); y = x W (in double). target = y, or labels = argmax_k y (the
/// first maximum), with d_out the class count.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_DATA_SYNTHETICDATA_H
#define ZSHARD_RUNTIME_LIB_DATA_SYNTHETICDATA_H

#include "data/BatchSource.h"

namespace zshard::rt {

class SyntheticGptSource : public BatchSource {
public:
  SyntheticGptSource(const std::vector<const ArgumentDesc *> &arguments,
                     const GptBatch &gpt, int64_t vocab,
                     const DataOptions &options);

  void fill(int64_t step, const std::vector<void *> &outputs) override;
  std::string describe() const override;

  /// The successor of \p token in the cycle.
  int64_t successor(int64_t token) const;

private:
  GptBatch gpt;
  size_t tokensSlot = 0, targetsSlot = 0;
  std::vector<int64_t> perm;     ///< The cycle, in order.
  std::vector<int64_t> position; ///< position[perm[i]] = i.
  uint64_t seed;
  DataShard shard;
};

class SyntheticMlpSource : public BatchSource {
public:
  /// \p classes is the width d_out of labels (ignored for target, whose
  /// width is its shape).
  SyntheticMlpSource(const std::vector<const ArgumentDesc *> &arguments,
                     const MlpBatch &mlp, int64_t classes,
                     const DataOptions &options);

  void fill(int64_t step, const std::vector<void *> &outputs) override;
  std::string describe() const override;

private:
  MlpBatch mlp;
  size_t xSlot = 0, ySlot = 0;
  int64_t inWidth = 0, outWidth = 0;
  std::vector<double> teacher; ///< [inWidth, outWidth]
  uint64_t seed;
  DataShard shard;
};

/// The class count of an MLP classifier: dimension 1 of the param
/// fc.<i>.weight with the largest i, as docs/models.md names them.
std::optional<int64_t> mlpClassCount(const Manifest &manifest);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_DATA_SYNTHETICDATA_H
