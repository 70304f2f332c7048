//===- BatchFile.cpp - Batches from a safetensors file --------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "data/BatchFile.h"

#include "core/Failure.h"
#include "core/Shape.h"
#include "io/Safetensors.h"
#include "io/TensorConvert.h"

#include <cstring>

using namespace zshard::rt;

namespace {
std::string names(const std::vector<const ArgumentDesc *> &arguments) {
  std::string out;
  for (const ArgumentDesc *arg : arguments)
    out += (out.empty() ? "" : ", ") + arg->name;
  return out.empty() ? "none" : out;
}
} // namespace

BatchFileSource::BatchFileSource(
    const std::vector<const ArgumentDesc *> &arguments,
    std::optional<int64_t> vocab, const DataOptions &options)
    : path(options.batchFile), arguments(arguments) {
  SafetensorsFile file = SafetensorsFile::read(path);
  for (const TensorView &tensor : file.tensors()) {
    bool known = false;
    for (const ArgumentDesc *arg : arguments)
      known |= arg->name == tensor.name;
    if (!known)
      fail(path + ": tensor '" + tensor.name +
           "' is not a batch argument of the step (batch arguments: " +
           names(arguments) + ")");
  }
  const int64_t world = options.shard.world, rank = options.shard.rank;

  // The step axis: decided by the first argument, the others must agree.
  bool first = true;
  for (const ArgumentDesc *arg : arguments) {
    const TensorView *tensor = file.find(arg->name);
    if (!tensor)
      fail(path + ": no tensor for batch argument '" + arg->name + "' (" +
           manifestName(arg->type.dtype) + " " + shapeString(arg->type.shape) +
           ")");
    // The global shape: world * B rows.
    std::vector<int64_t> global = arg->type.shape;
    if (!global.empty())
      global[0] *= world;
    bool withAxis =
        tensor->shape.size() == global.size() + 1 &&
        std::equal(global.begin(), global.end(), tensor->shape.begin() + 1);
    bool plain = tensor->shape == global;
    if (!withAxis && !plain)
      fail(path + ": tensor '" + tensor->name + "' has shape " +
           shapeString(tensor->shape) + "; batch argument '" + arg->name +
           "' needs " + shapeString(global) + " or [S, ...] of it");
    int64_t entries = withAxis ? tensor->shape[0] : 1;
    if (first) {
      hasStepAxis = withAxis;
      numSteps = entries;
      first = false;
    } else if (withAxis != hasStepAxis || entries != numSteps) {
      fail(path + ": tensor '" + tensor->name + "' has shape " +
           shapeString(tensor->shape) +
           ", but the batch tensors need the same leading step axis (or "
           "none)");
    }
    if (numSteps == 0)
      fail(path + ": tensor '" + tensor->name + "' has an empty step axis");
    if (!canReadAs(tensor->dtype, arg->type.dtype))
      fail(path + ": tensor '" + tensor->name + "' is " +
           safetensorsName(tensor->dtype) +
           ", which cannot be read as batch "
           "argument '" +
           arg->name + "' (" + manifestName(arg->type.dtype) + ")");

    // Convert all of it (so every value is checked now), then keep this
    // rank's rows of each entry.
    std::vector<unsigned char> all(tensor->elements *
                                   dtypeSize(arg->type.dtype));
    readAs(tensor->dtype, tensor->data, tensor->elements, arg->type.dtype,
           all.data(), path + ": tensor '" + tensor->name + "'");
    bool isToken = arg->name == "tokens" || arg->name == "targets";
    if (vocab && isToken)
      for (uint64_t i = 0; i < tensor->elements; ++i) {
        int64_t token = loadAsInt(arg->type.dtype, all.data(), i);
        if (token < 0 || token >= *vocab)
          fail(path + ": tensor '" + tensor->name + "': element " +
               std::to_string(i) + " = " + std::to_string(token) +
               " is not in [0, " + std::to_string(*vocab) +
               ") (the vocabulary of param 'wte')");
      }
    uint64_t local = arg->type.bytes;
    uint64_t entryBytes = all.size() / uint64_t(numSteps);
    uint64_t rankOffset = global.empty() ? 0 : uint64_t(rank) * local;
    std::vector<unsigned char> mine(uint64_t(numSteps) * local);
    for (int64_t s = 0; s < numSteps; ++s)
      if (local)
        std::memcpy(mine.data() + uint64_t(s) * local,
                    all.data() + uint64_t(s) * entryBytes + rankOffset, local);
    data.push_back(std::move(mine));
  }
}

void BatchFileSource::fill(int64_t step, const std::vector<void *> &outputs) {
  int64_t entry = ((step - 1) % numSteps + numSteps) % numSteps;
  for (size_t i = 0; i < arguments.size(); ++i) {
    uint64_t bytes = arguments[i]->type.bytes;
    if (bytes)
      std::memcpy(outputs[i], data[i].data() + uint64_t(entry) * bytes, bytes);
  }
}

std::string BatchFileSource::describe() const {
  return path + (hasStepAxis ? " (" + std::to_string(numSteps) +
                                   " batches, step s uses (s - 1) mod " +
                                   std::to_string(numSteps) + ")"
                             : " (one batch for every step)");
}
