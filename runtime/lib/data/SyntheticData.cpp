//===- SyntheticData.cpp - Built-in learnable data for demos --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "data/SyntheticData.h"

#include "core/Philox.h"

#include <cmath>
#include <cstdlib>
#include <utility>

using namespace zshard::rt;

namespace {
size_t slotOf(const std::vector<const ArgumentDesc *> &arguments,
              const ArgumentDesc *arg) {
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i] == arg)
      return i;
  return 0;
}
} // namespace

SyntheticGptSource::SyntheticGptSource(
    const std::vector<const ArgumentDesc *> &arguments, const GptBatch &gpt,
    int64_t vocab, const DataOptions &options)
    : gpt(gpt), tokensSlot(slotOf(arguments, gpt.tokens)),
      targetsSlot(slotOf(arguments, gpt.targets)), perm(size_t(vocab)),
      position(size_t(vocab)), seed(options.seed), shard(options.shard) {
  for (int64_t i = 0; i < vocab; ++i)
    perm[size_t(i)] = i;
  CounterRng rng(dataKey("zshard.data.cycle", seed), 0);
  for (int64_t i = vocab - 1; i > 0; --i)
    std::swap(perm[size_t(i)], perm[rng.below(uint64_t(i), uint64_t(i) + 1)]);
  for (int64_t i = 0; i < vocab; ++i)
    position[size_t(perm[size_t(i)])] = i;
}

int64_t SyntheticGptSource::successor(int64_t token) const {
  size_t next = (size_t(position[size_t(token)]) + 1) % perm.size();
  return perm[next];
}

void SyntheticGptSource::fill(int64_t step,
                              const std::vector<void *> &outputs) {
  CounterRng rng(dataKey("zshard.data.start", seed), uint64_t(step));
  uint64_t vocab = perm.size();
  uint64_t T = uint64_t(gpt.length);
  for (int64_t b = 0; b < gpt.batch; ++b) {
    uint64_t row = uint64_t(shard.rank) * uint64_t(gpt.batch) + uint64_t(b);
    uint64_t start = rng.below(row, vocab);
    for (uint64_t t = 0; t < T; ++t) {
      uint64_t index = uint64_t(b) * T + t;
      storeFromInt(gpt.tokens->type.dtype, outputs[tokensSlot], index,
                   perm[(start + t) % vocab]);
      storeFromInt(gpt.targets->type.dtype, outputs[targetsSlot], index,
                   perm[(start + t + 1) % vocab]);
    }
  }
}

std::string SyntheticGptSource::describe() const {
  return "synthetic gpt: a random cycle through the vocabulary of " +
         std::to_string(perm.size()) + " (seed " + std::to_string(seed) + ")";
}

SyntheticMlpSource::SyntheticMlpSource(
    const std::vector<const ArgumentDesc *> &arguments, const MlpBatch &mlp,
    int64_t classes, const DataOptions &options)
    : mlp(mlp), xSlot(slotOf(arguments, mlp.x)),
      ySlot(slotOf(arguments, mlp.target ? mlp.target : mlp.labels)),
      inWidth(mlp.x->type.shape[1]),
      outWidth(mlp.target ? mlp.target->type.shape[1] : classes),
      teacher(size_t(inWidth * outWidth)), seed(options.seed),
      shard(options.shard) {
  CounterRng rng(dataKey("zshard.data.teacher", seed), 0);
  double scale = 1.0 / std::sqrt(double(inWidth > 0 ? inWidth : 1));
  for (size_t i = 0; i < teacher.size(); ++i)
    teacher[i] = rng.normal(i) * scale;
}

void SyntheticMlpSource::fill(int64_t step,
                              const std::vector<void *> &outputs) {
  CounterRng rng(dataKey("zshard.data.x", seed), uint64_t(step));
  std::vector<double> x(static_cast<size_t>(inWidth));
  std::vector<double> y(static_cast<size_t>(outWidth));
  DType xType = mlp.x->type.dtype;
  for (int64_t b = 0; b < mlp.batch; ++b) {
    uint64_t row = uint64_t(shard.rank) * uint64_t(mlp.batch) + uint64_t(b);
    for (int64_t j = 0; j < inWidth; ++j) {
      // The value the step sees, so the teacher maps exactly that input.
      storeFromDouble(xType, outputs[xSlot], uint64_t(b * inWidth + j),
                      rng.normal(row * uint64_t(inWidth) + uint64_t(j)));
      x[size_t(j)] =
          loadAsDouble(xType, outputs[xSlot], uint64_t(b * inWidth + j));
    }
    for (int64_t k = 0; k < outWidth; ++k) {
      double sum = 0;
      for (int64_t j = 0; j < inWidth; ++j)
        sum += x[size_t(j)] * teacher[size_t(j * outWidth + k)];
      y[size_t(k)] = sum;
    }
    if (mlp.target) {
      for (int64_t k = 0; k < outWidth; ++k)
        storeFromDouble(mlp.target->type.dtype, outputs[ySlot],
                        uint64_t(b * outWidth + k), y[size_t(k)]);
    } else {
      int64_t best = 0;
      for (int64_t k = 1; k < outWidth; ++k)
        if (y[size_t(k)] > y[size_t(best)])
          best = k;
      storeFromInt(mlp.labels->type.dtype, outputs[ySlot], uint64_t(b), best);
    }
  }
}

std::string SyntheticMlpSource::describe() const {
  return std::string("synthetic mlp: x ~ N(0, 1), ") +
         (mlp.target ? "target" : "labels = argmax of") +
         " a fixed random linear teacher " + std::to_string(inWidth) + " -> " +
         std::to_string(outWidth) + " (seed " + std::to_string(seed) + ")";
}

std::optional<int64_t> zshard::rt::mlpClassCount(const Manifest &manifest) {
  std::optional<int64_t> classes;
  long best = -1;
  // Param arguments and members of sharded units.
  for (const auto &[namePtr, shapePtr] : manifest.modelParams()) {
    const std::string &name = *namePtr;
    const std::vector<int64_t> &shape = *shapePtr;
    if (shape.size() != 2 || name.compare(0, 3, "fc.") != 0 ||
        name.size() < 11 || name.compare(name.size() - 7, 7, ".weight") != 0)
      continue;
    std::string layer = name.substr(3, name.size() - 10);
    char *end = nullptr;
    long index = std::strtol(layer.c_str(), &end, 10);
    if (layer.empty() || *end != '\0' || index < 0)
      continue;
    if (index > best) {
      best = index;
      classes = shape[1];
    }
  }
  return classes;
}
