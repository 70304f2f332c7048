//===- TokenFile.h - Training data from a flat token file -------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A token file is a flat array of little-endian uint16 or uint32 token ids,
/// as nanoGPT's prepare scripts write train.bin (uint16). For a GPT step with
/// tokens and targets of [B, T], row g of the global batch at step s takes
/// the T + 1 tokens from offset
///   o = CounterRng(dataKey("zshard.data.tokens", seed), s).below(g, n - T)
/// (n tokens in the file): tokens = x[o : o+T], targets = x[o+1 : o+T+1].
/// Sampling windows at random offsets, as nanoGPT's get_batch does, needs no
/// epochs and no shuffle state.
///
/// The file is memory-mapped and checked once when opened: its size must be a
/// multiple of the token size, it must hold at least T + 1 tokens, and every
/// token must be below the vocabulary (when the step's "wte" gives one) and
/// fit the dtype of the tokens argument.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_DATA_TOKENFILE_H
#define ZSHARD_RUNTIME_LIB_DATA_TOKENFILE_H

#include "data/BatchSource.h"

namespace zshard::rt {

/// A read-only mapping of a token file.
class TokenFile {
public:
  /// Maps \p path of u16 or u32 tokens. Throws a Failure naming the path when
  /// it cannot be read or its size is not a multiple of the token size.
  TokenFile(std::string path, DType dtype);
  ~TokenFile();
  TokenFile(const TokenFile &) = delete;
  TokenFile &operator=(const TokenFile &) = delete;

  const std::string &path() const { return filePath; }
  DType dtype() const { return tokenDType; }
  uint64_t size() const { return count; }
  uint32_t operator[](uint64_t index) const {
    return tokenDType == DType::U16
               ? static_cast<const uint16_t *>(data)[index]
               : static_cast<const uint32_t *>(data)[index];
  }

private:
  std::string filePath;
  DType tokenDType;
  void *data = nullptr;
  uint64_t bytes = 0;
  uint64_t count = 0;
};

class TokenFileSource : public BatchSource {
public:
  /// Opens \p options.tokenFile for the GPT batch \p gpt of a step whose
  /// batch arguments are \p arguments; \p vocab bounds the token ids when
  /// known. Throws a Failure for any problem of the file.
  TokenFileSource(const std::vector<const ArgumentDesc *> &arguments,
                  const GptBatch &gpt, std::optional<int64_t> vocab,
                  const DataOptions &options);

  void fill(int64_t step, const std::vector<void *> &outputs) override;
  std::string describe() const override;

private:
  TokenFile file;
  GptBatch gpt;
  size_t tokensSlot = 0, targetsSlot = 0;
  uint64_t key;
  DataShard shard;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_DATA_TOKENFILE_H
