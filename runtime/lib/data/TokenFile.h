//===- TokenFile.h - Training data from a flat token file -------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A token file is a flat array of little-endian uint16 or uint32 token ids,
/// as nanoGPT's prepare scripts write train.bin (uint16). For a GPT step
/// with a window ("tokens") and the window shifted by one ("targets") of
/// [B, T] (GptBatch: tokens/targets, idx/targets, ... or --data-inputs), the
/// file of n tokens is cut into W = (n - 1) / T windows of T + 1 tokens
/// starting every T tokens. Sample g of the run (the global batch of step s
/// has rows (s - 1) * world * B ...; rank r's rows come after ranks 0..r-1)
/// reads window perm_e(g mod W) of epoch e = g / W, perm_e a Feistel
/// bijection of [0, W) keyed by the seed and the epoch: every window once
/// per epoch, ranks never on the same window, reshuffled each epoch by
/// itself. tokens = x[o : o+T], targets = x[o+1 : o+T+1], o = T * window.
/// With DataOptions::inOrder (the eval data) sample g reads window g mod W:
/// the file's windows in order, wrapping, the same in every pass.
///
/// The file is memory-mapped and checked once when opened, in one pass: its
/// size must be a multiple of the token size, it must hold at least T + 1
/// tokens, and every token must be below the vocabulary (the rows of the
/// step's token embedding table, when it has one) and fit the dtype of both
/// batch arguments. A u32 file read as u16 (or the reverse) shows as ids
/// beyond the vocabulary, and the error says so.
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
  /// The largest token, and the index of the first token >= \p bound (or
  /// size() when none is): one pass over the file.
  uint32_t maxToken() const;
  uint64_t firstAtLeast(uint64_t bound) const;
  /// Whether this is a u16 file whose every second token is 0 (and some
  /// other is not), as a file of u32 tokens below 65536 reads as u16.
  bool looksLikeU32() const;
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
                  const GptBatch &gpt, std::optional<Vocabulary> vocab,
                  const DataOptions &options);

  void fill(int64_t step, const std::vector<void *> &outputs) override;
  std::string describe() const override;

private:
  TokenFile file;
  GptBatch gpt;
  size_t tokensSlot = 0, targetsSlot = 0;
  uint64_t key;
  DataShard shard;
  bool inOrder = false;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_DATA_TOKENFILE_H
