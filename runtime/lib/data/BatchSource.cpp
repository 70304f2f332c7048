//===- BatchSource.cpp - Where the batch of each step comes from ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "data/BatchSource.h"

#include "core/Failure.h"
#include "core/Fnv1a.h"
#include "core/Shape.h"
#include "data/BatchFile.h"
#include "data/SyntheticData.h"
#include "data/TokenFile.h"

using namespace zshard::rt;

namespace {

const ArgumentDesc *findBatch(const Manifest &manifest, std::string_view name) {
  return manifest.findArgument(ArgRole::Batch, name);
}

bool isIntegerArg(const ArgumentDesc *arg) {
  return isIntegerDType(arg->type.dtype);
}

std::string batchNames(const std::vector<const ArgumentDesc *> &arguments) {
  std::string out;
  for (const ArgumentDesc *arg : arguments)
    out += (out.empty() ? "" : ", ") + arg->name + " " +
           manifestName(arg->type.dtype) + " " + shapeString(arg->type.shape);
  return out;
}

} // namespace

uint64_t zshard::rt::dataKey(std::string_view domain, uint64_t seed) {
  return fnv1a64Word(seed, fnv1a64(domain));
}

std::vector<const ArgumentDesc *>
zshard::rt::batchArguments(const Manifest &manifest) {
  std::vector<const ArgumentDesc *> out;
  for (const ArgumentDesc &arg : manifest.arguments)
    if (arg.role == ArgRole::Batch)
      out.push_back(&arg);
  return out;
}

std::optional<GptBatch> zshard::rt::matchGptBatch(const Manifest &manifest) {
  GptBatch gpt;
  gpt.tokens = findBatch(manifest, "tokens");
  gpt.targets = findBatch(manifest, "targets");
  if (!gpt.tokens || !gpt.targets || batchArguments(manifest).size() != 2)
    return std::nullopt;
  const std::vector<int64_t> &shape = gpt.tokens->type.shape;
  if (shape.size() != 2 || gpt.targets->type.shape != shape ||
      !isIntegerArg(gpt.tokens) || !isIntegerArg(gpt.targets))
    return std::nullopt;
  gpt.batch = shape[0];
  gpt.length = shape[1];
  return gpt;
}

std::optional<MlpBatch> zshard::rt::matchMlpBatch(const Manifest &manifest) {
  MlpBatch mlp;
  mlp.x = findBatch(manifest, "x");
  mlp.target = findBatch(manifest, "target");
  mlp.labels = findBatch(manifest, "labels");
  if (!mlp.x || (!mlp.target == !mlp.labels) ||
      batchArguments(manifest).size() != 2)
    return std::nullopt;
  const std::vector<int64_t> &shape = mlp.x->type.shape;
  if (shape.size() != 2 || !isFloatDType(mlp.x->type.dtype))
    return std::nullopt;
  mlp.batch = shape[0];
  if (mlp.target && (mlp.target->type.shape.size() != 2 ||
                     mlp.target->type.shape[0] != mlp.batch ||
                     !isFloatDType(mlp.target->type.dtype)))
    return std::nullopt;
  if (mlp.labels &&
      (mlp.labels->type.shape != std::vector<int64_t>{mlp.batch} ||
       !isIntegerArg(mlp.labels)))
    return std::nullopt;
  return mlp;
}

std::optional<int64_t> zshard::rt::manifestVocab(const Manifest &manifest) {
  // A param argument, or a member of a sharded unit.
  for (const auto &[name, shape] : manifest.modelParams())
    if (*name == "wte" && shape->size() == 2)
      return (*shape)[0];
  return std::nullopt;
}

std::unique_ptr<BatchSource>
zshard::rt::makeBatchSource(const Manifest &manifest,
                            const DataOptions &options) {
  std::vector<const ArgumentDesc *> arguments = batchArguments(manifest);
  std::optional<int64_t> vocab = manifestVocab(manifest);
  if (!options.tokenFile.empty() && !options.batchFile.empty())
    fail("--data and --batch-file exclude each other");
  if (!options.batchFile.empty())
    return std::make_unique<BatchFileSource>(arguments, vocab, options);

  std::optional<GptBatch> gpt = matchGptBatch(manifest);
  if (!options.tokenFile.empty()) {
    if (!gpt)
      fail(options.tokenFile +
           ": a token file feeds a step whose batch "
           "arguments are tokens and targets, integer "
           "[B, T]; this step has: " +
           (arguments.empty() ? std::string("none") : batchNames(arguments)));
    return std::make_unique<TokenFileSource>(arguments, *gpt, vocab, options);
  }
  if (arguments.empty())
    return nullptr;
  if (gpt) {
    if (!vocab)
      fail("synthetic data for a GPT step needs the vocabulary size, and the "
           "step has no param 'wte' [V, D]; give --data or --batch-file");
    return std::make_unique<SyntheticGptSource>(arguments, *gpt, *vocab,
                                                options);
  }
  if (std::optional<MlpBatch> mlp = matchMlpBatch(manifest)) {
    int64_t classes = 0;
    if (mlp->labels) {
      std::optional<int64_t> count = mlpClassCount(manifest);
      if (!count || *count < 1)
        fail("synthetic labels need the class count, and the step has no "
             "param fc.<i>.weight [d_i, d_out]; give --batch-file");
      classes = *count;
    }
    return std::make_unique<SyntheticMlpSource>(arguments, *mlp, classes,
                                                options);
  }
  fail("no data for batch arguments " + batchNames(arguments) +
       ": the built-in synthetic data covers GPT steps (tokens, targets) and "
       "MLP steps (x with target or labels); give --batch-file");
}
