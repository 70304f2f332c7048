//===- BatchFile.h - Batches from a safetensors file ------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// --batch-file F.safetensors: one tensor per batch argument, by name, as
/// zshard_ref's --batch-file. Either every tensor has its argument's shape
/// (the global batch: world * B rows), and every step uses it, or every
/// tensor has a leading step axis [S, ...] of the same S, and global step s
/// uses entry (s - 1) mod S. Over a run from step 1 that is zshard_ref's
/// choice; after a resume the entry still follows the global step, so a
/// resumed run sees the batches an uninterrupted run would.
///
/// Tensors are read as their argument's dtype (io/TensorConvert.h: any
/// integer dtype for integer arguments, F32/BF16/F16 for f32, ...), and
/// tokens and targets are checked against the vocabulary, all when the file
/// is opened.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_DATA_BATCHFILE_H
#define ZSHARD_RUNTIME_LIB_DATA_BATCHFILE_H

#include "data/BatchSource.h"

namespace zshard::rt {

class BatchFileSource : public BatchSource {
public:
  /// Reads and checks \p options.batchFile for \p arguments. Throws a
  /// Failure naming the file and the problem.
  BatchFileSource(const std::vector<const ArgumentDesc *> &arguments,
                  std::optional<int64_t> vocab, const DataOptions &options);

  void fill(int64_t step, const std::vector<void *> &outputs) override;
  std::string describe() const override;

  /// Entries along the step axis (1 without one).
  int64_t steps() const { return numSteps; }

private:
  std::string path;
  std::vector<const ArgumentDesc *> arguments;
  /// Per argument: this rank's rows of every entry, in the argument's dtype.
  std::vector<std::vector<unsigned char>> data;
  int64_t numSteps = 1;
  bool hasStepAxis = false;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_DATA_BATCHFILE_H
