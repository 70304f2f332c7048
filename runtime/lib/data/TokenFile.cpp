//===- TokenFile.cpp - Training data from a flat token file ---------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "data/TokenFile.h"

#include "core/Failure.h"
#include "core/Philox.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace zshard::rt;

TokenFile::TokenFile(std::string path, DType dtype)
    : filePath(std::move(path)), tokenDType(dtype) {
  if (dtype != DType::U16 && dtype != DType::U32)
    fail(filePath + ": token files hold u16 or u32 tokens, not " +
         manifestName(dtype));
  int fd = open(filePath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(filePath + ": cannot open: " + std::strerror(errno));
  struct stat info;
  if (fstat(fd, &info) != 0 || S_ISDIR(info.st_mode)) {
    std::string why =
        S_ISDIR(info.st_mode) ? "is a directory" : std::strerror(errno);
    close(fd);
    fail(filePath + ": cannot read: " + why);
  }
  bytes = uint64_t(info.st_size);
  size_t size = dtypeSize(dtype);
  if (bytes % size != 0) {
    close(fd);
    fail(filePath + ": size " + std::to_string(bytes) +
         " bytes is not a multiple of " + std::to_string(size) + " (" +
         manifestName(dtype) + " tokens; see --data-dtype)");
  }
  count = bytes / size;
  if (bytes > 0) {
    data = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      data = nullptr;
      std::string why = std::strerror(errno);
      close(fd);
      fail(filePath + ": cannot map: " + why);
    }
  }
  close(fd);
}

TokenFile::~TokenFile() {
  if (data)
    munmap(data, bytes);
}

namespace {

/// The largest of \p count tokens at \p data: a loop the compiler
/// vectorises.
template <typename T> uint32_t maxOf(const T *data, uint64_t count) {
  T largest = 0;
  for (uint64_t i = 0; i < count; ++i)
    largest = data[i] > largest ? data[i] : largest;
  return largest;
}

template <typename T>
uint64_t firstAtLeastOf(const T *data, uint64_t count, uint64_t bound) {
  for (uint64_t i = 0; i < count; ++i)
    if (data[i] >= bound)
      return i;
  return count;
}

} // namespace

uint32_t TokenFile::maxToken() const {
  return tokenDType == DType::U16
             ? maxOf(static_cast<const uint16_t *>(data), count)
             : maxOf(static_cast<const uint32_t *>(data), count);
}

uint64_t TokenFile::firstAtLeast(uint64_t bound) const {
  return tokenDType == DType::U16
             ? firstAtLeastOf(static_cast<const uint16_t *>(data), count, bound)
             : firstAtLeastOf(static_cast<const uint32_t *>(data), count,
                              bound);
}

bool TokenFile::looksLikeU32() const {
  // Pairs of u16 tokens as the u32 words they would be: all high halves 0,
  // some low half not. Too short a file says nothing.
  if (tokenDType != DType::U16 || count < 16 || count % 2 != 0)
    return false;
  const uint32_t *words = static_cast<const uint32_t *>(data);
  uint32_t any = 0;
  for (uint64_t i = 0; i < count / 2; ++i)
    any |= words[i];
  return (any >> 16) == 0 && any != 0;
}

TokenFileSource::TokenFileSource(
    const std::vector<const ArgumentDesc *> &arguments, const GptBatch &gpt,
    std::optional<Vocabulary> vocab, const DataOptions &options)
    : file(options.tokenFile, options.tokenDType), gpt(gpt),
      key(dataKey("zshard.data.tokens", options.seed)), shard(options.shard),
      inOrder(options.inOrder) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i] == gpt.tokens)
      tokensSlot = i;
    if (arguments[i] == gpt.targets)
      targetsSlot = i;
  }
  uint64_t need = uint64_t(gpt.length) + 1;
  if (file.size() < need)
    fail(file.path() + ": " + std::to_string(file.size()) +
         " tokens, fewer than the " + std::to_string(need) +
         " (T + 1) one batch row needs");

  if (file.looksLikeU32())
    fail(file.path() + ": every second u16 token is 0 (" +
         std::to_string(file.size()) +
         " tokens): it looks like a file of u32 tokens; give --data-dtype u32");
  // One pass over the whole file for the largest token; a second, up to the
  // first offending token, only when there is one.
  uint32_t largest = file.maxToken();
  if (vocab && int64_t(largest) >= vocab->size) {
    uint64_t at = file.firstAtLeast(uint64_t(vocab->size));
    bool u16 = file.dtype() == DType::U16;
    fail(file.path() + ": token " + std::to_string(file[at]) + " at index " +
         std::to_string(at) + " is not below the vocabulary size " +
         std::to_string(vocab->size) + " (the rows of param '" + vocab->table +
         "'); read as " + manifestName(file.dtype()) +
         (u16 ? ": is it a file of u32 tokens? (--data-dtype u32)"
              : ": is it a file of u16 tokens? (--data-dtype u16)"));
  }
  for (const ArgumentDesc *arg : {gpt.tokens, gpt.targets})
    if (!fitsIntDType(arg->type.dtype, largest)) {
      uint64_t at = file.firstAtLeast(uint64_t(largest));
      fail(file.path() + ": token " + std::to_string(largest) + " at index " +
           std::to_string(at) + " does not fit batch '" + arg->name + "' (" +
           manifestName(arg->type.dtype) + ")");
    }
}

namespace {

/// A bijection of [0, n) chosen by `seed`: a 4-round Feistel network over the
/// smallest even-bit power of two >= n, cycle-walking back into [0, n).
uint64_t permute(uint64_t index, uint64_t n, uint64_t seed) {
  if (n <= 1)
    return 0;
  unsigned bits = 64 - __builtin_clzll(n - 1);
  unsigned half = (bits + 1) / 2;
  uint64_t mask = (uint64_t(1) << half) - 1;
  CounterRng round(seed, 0x5eedULL);
  uint64_t x = index;
  do {
    for (uint64_t r = 0; r < 4; ++r) {
      uint64_t left = x >> half, right = x & mask;
      uint64_t mixed = round.bits64((r << 40) ^ right) & mask;
      x = (right << half) | (left ^ mixed);
    }
  } while (x >= n);
  return x;
}

} // namespace

void TokenFileSource::fill(int64_t step, const std::vector<void *> &outputs) {
  if (step < 1)
    fail(file.path() + ": steps count from 1, got " + std::to_string(step));
  void *tokens = outputs[tokensSlot];
  void *targets = outputs[targetsSlot];
  DType tokensType = gpt.tokens->type.dtype;
  DType targetsType = gpt.targets->type.dtype;
  uint64_t T = uint64_t(gpt.length);
  // The file is cut into windows of T + 1 tokens starting every T tokens.
  // Sample g of the run (global batch after global batch, rank after rank)
  // is window perm_e(g mod W) of epoch e = g / W: every window once per
  // epoch, in an order reshuffled each epoch from the seed alone, so no rank
  // needs to be told the epoch and ranks never draw the same window.
  uint64_t windows = (file.size() - 1) / T;
  uint64_t globalBatch = uint64_t(gpt.batch) * uint64_t(shard.world);
  for (int64_t b = 0; b < gpt.batch; ++b) {
    uint64_t row = uint64_t(shard.rank) * uint64_t(gpt.batch) + uint64_t(b);
    uint64_t sample = uint64_t(step - 1) * globalBatch + row;
    uint64_t epoch = sample / windows;
    // In order (eval data): window g mod W, the same in every epoch.
    uint64_t offset =
        T * (inOrder ? sample % windows
                     : permute(sample % windows, windows,
                               key ^ (epoch * 0x9e3779b97f4a7c15ULL)));
    for (uint64_t t = 0; t < T; ++t) {
      storeFromInt(tokensType, tokens, uint64_t(b) * T + t, file[offset + t]);
      storeFromInt(targetsType, targets, uint64_t(b) * T + t,
                   file[offset + t + 1]);
    }
  }
}

std::string TokenFileSource::describe() const {
  return file.path() + " (" + std::to_string(file.size()) + " " +
         manifestName(file.dtype()) + " tokens)";
}
