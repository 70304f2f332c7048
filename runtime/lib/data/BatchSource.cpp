//===- BatchSource.cpp - Where the batch of each step comes from ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "data/BatchSource.h"

#include "core/Failure.h"
#include "core/Shape.h"
#include "data/BatchFile.h"
#include "data/SyntheticData.h"
#include "data/TokenFile.h"
#include "zshard/abi/Fnv1a.h"

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
  return zshard_abi::fnv1a64Word(seed, zshard_abi::fnv1a64(domain));
}

std::vector<const ArgumentDesc *>
zshard::rt::batchArguments(const Manifest &manifest) {
  std::vector<const ArgumentDesc *> out;
  for (const ArgumentDesc &arg : manifest.arguments)
    if (arg.role == ArgRole::Batch)
      out.push_back(&arg);
  return out;
}

const std::pair<const char *, const char *> zshard::rt::gptBatchNames[5] = {
    {"tokens", "targets"},
    {"idx", "targets"},
    {"input_ids", "targets"},
    {"inputs", "targets"},
    {"x", "y"}};

namespace {

/// \p tokens and \p targets as a GPT batch, when both are integer [B, T] of
/// one shape.
std::optional<GptBatch> gptBatchOf(const ArgumentDesc *tokens,
                                   const ArgumentDesc *targets) {
  const std::vector<int64_t> &shape = tokens->type.shape;
  if (shape.size() != 2 || targets->type.shape != shape ||
      !isIntegerArg(tokens) || !isIntegerArg(targets))
    return std::nullopt;
  GptBatch gpt;
  gpt.tokens = tokens;
  gpt.targets = targets;
  gpt.batch = shape[0];
  gpt.length = shape[1];
  return gpt;
}

} // namespace

std::optional<GptBatch> zshard::rt::matchGptBatch(const Manifest &manifest) {
  if (batchArguments(manifest).size() != 2)
    return std::nullopt;
  for (const auto &[inputs, targets] : gptBatchNames) {
    const ArgumentDesc *tokens = findBatch(manifest, inputs);
    const ArgumentDesc *next = findBatch(manifest, targets);
    if (tokens && next)
      return gptBatchOf(tokens, next);
  }
  return std::nullopt;
}

GptBatch zshard::rt::tokenFileBatch(const Manifest &manifest,
                                    const std::string &file,
                                    const std::string &inputs,
                                    const std::string &targets) {
  std::vector<const ArgumentDesc *> arguments = batchArguments(manifest);
  std::string has =
      arguments.empty() ? std::string("none") : batchNames(arguments);
  if (inputs.empty()) {
    if (std::optional<GptBatch> gpt = matchGptBatch(manifest))
      return *gpt;
    std::string pairs;
    for (const auto &[in, out] : gptBatchNames)
      pairs += std::string(pairs.empty() ? "" : ", ") + in + "/" + out;
    fail(file +
         ": a token file feeds a step whose two batch arguments are a "
         "token window and the window shifted by one, integer [B, T], "
         "named " +
         pairs +
         " or given by --data-inputs INPUTS,TARGETS; this step has: " + has);
  }
  const ArgumentDesc *tokens = findBatch(manifest, inputs);
  const ArgumentDesc *next = findBatch(manifest, targets);
  for (const std::string *name : {&inputs, &targets})
    if (!findBatch(manifest, *name))
      fail(
          "--data-inputs: '" + *name +
          "' is not a batch argument of the step; its batch arguments: " + has);
  std::optional<GptBatch> gpt = gptBatchOf(tokens, next);
  if (!gpt)
    fail("--data-inputs: '" + inputs + "' and '" + targets +
         "' must be integer [B, T] of one shape to take token windows; the "
         "step has: " +
         has);
  for (const ArgumentDesc *arg : arguments)
    if (arg != tokens && arg != next)
      fail("--data feeds '" + inputs + "' and '" + targets +
           "', and the step's batch argument '" + arg->name +
           "' would have no data (give --batch-file)");
  return *gpt;
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

std::optional<Vocabulary>
zshard::rt::manifestVocabulary(const Manifest &manifest) {
  static const std::string_view tables[] = {
      "wte.weight", "embed_tokens.weight", "tok_embeddings.weight",
      "word_embeddings.weight", "embed_in.weight"};
  auto isTable = [](std::string_view name) {
    if (name == "wte")
      return true;
    for (std::string_view table : tables)
      if (name == table || (name.size() > table.size() &&
                            name.substr(name.size() - table.size()) == table &&
                            name[name.size() - table.size() - 1] == '.'))
        return true;
    return false;
  };
  // A param argument, or a member of a sharded unit.
  for (const auto &[name, shape] : manifest.modelParams())
    if (isTable(*name) && shape->size() == 2)
      return Vocabulary{(*shape)[0], *name};
  return std::nullopt;
}

std::optional<int64_t> zshard::rt::manifestVocab(const Manifest &manifest) {
  if (std::optional<Vocabulary> vocab = manifestVocabulary(manifest))
    return vocab->size;
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

  if (!options.tokenFile.empty())
    return std::make_unique<TokenFileSource>(
        arguments,
        tokenFileBatch(manifest, options.tokenFile, options.tokenInputs,
                       options.tokenTargets),
        manifestVocabulary(manifest), options);
  std::optional<GptBatch> gpt = matchGptBatch(manifest);
  if (arguments.empty())
    return nullptr;
  if (gpt) {
    if (!vocab)
      fail("synthetic data for a GPT step needs the vocabulary size, and the "
           "step has no token embedding table (param 'wte' [V, D], or one "
           "ending in wte.weight, embed_tokens.weight, ...); give --data or "
           "--batch-file");
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
