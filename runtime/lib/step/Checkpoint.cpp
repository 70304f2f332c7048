//===- Checkpoint.cpp - Step state from init specs and files --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/Checkpoint.h"

#include "core/Failure.h"
#include "core/Shape.h"
#include "io/Safetensors.h"
#include "io/TensorConvert.h"

#include <set>

using namespace zshard::rt;

namespace {

bool isState(const ArgumentDesc &arg) {
  return arg.role == ArgRole::Param || arg.role == ArgRole::OptState;
}

std::string describe(const ArgumentDesc &arg) {
  return std::string(roleName(arg.role)) + " '" + arg.name + "' (" +
         manifestName(arg.type.dtype) + " " + shapeString(arg.type.shape) + ")";
}

/// Parses the decimal step of a checkpoint's metadata.
int64_t parseStep(const std::string &path, const std::string &text) {
  bool digits = !text.empty() && text.size() <= 18;
  for (char ch : text)
    digits &= ch >= '0' && ch <= '9';
  if (!digits)
    fail(path + ": __metadata__ step '" + text +
         "' is not a non-negative integer");
  return std::stoll(text);
}

/// Initialises \p arg from its init spec; "param" copies the parameter's
/// buffer, which must be initialised already.
void initArgument(const Manifest &manifest, StepBuffers &buffers,
                  const ArgumentDesc &arg, uint64_t seed) {
  void *out = buffers.argument(size_t(arg.index));
  if (arg.init.kind != InitSpec::Kind::Param) {
    initTensor(arg.init, arg.name, seed, arg.type.dtype, 0, arg.type.elements,
               out);
    return;
  }
  const ArgumentDesc *param = manifest.findArgument(ArgRole::Param, arg.param);
  initFromParam(buffers.argument(size_t(param->index)), param->type.dtype,
                arg.type.dtype, 0, arg.type.elements, out);
}

} // namespace

void zshard::rt::initFromSpecs(const Manifest &manifest, StepBuffers &buffers,
                               uint64_t seed) {
  // Parameters first: optimizer state may start as a copy of them.
  for (ArgRole role : {ArgRole::Param, ArgRole::OptState})
    for (const ArgumentDesc &arg : manifest.arguments)
      if (arg.role == role)
        initArgument(manifest, buffers, arg, seed);
}

int64_t zshard::rt::loadState(const Manifest &manifest, StepBuffers &buffers,
                              const std::string &path, StateFile kind,
                              uint64_t seed) {
  SafetensorsFile file = SafetensorsFile::read(path);
  std::set<std::string> known;
  for (const ArgumentDesc &arg : manifest.arguments)
    if (isState(arg))
      known.insert(arg.name);
  for (const TensorView &tensor : file.tensors())
    if (!known.count(tensor.name))
      fail(path + ": tensor '" + tensor.name +
           "' is neither a param nor an opt_state of the step");

  // Parameters first: optimizer state may start as a copy of them.
  std::vector<const ArgumentDesc *> order;
  for (ArgRole role : {ArgRole::Param, ArgRole::OptState})
    for (const ArgumentDesc &arg : manifest.arguments)
      if (arg.role == role)
        order.push_back(&arg);
  for (const ArgumentDesc *state : order) {
    const ArgumentDesc &arg = *state;
    void *out = buffers.argument(size_t(arg.index));
    const TensorView *tensor = file.find(arg.name);
    if (!tensor) {
      if (arg.role == ArgRole::OptState && kind == StateFile::Parameters) {
        initArgument(manifest, buffers, arg, seed);
        continue;
      }
      fail(path + ": no tensor for " + describe(arg) +
           (kind == StateFile::Checkpoint
                ? " (a --resume file holds every param and opt_state)"
                : ""));
    }
    if (tensor->shape != arg.type.shape)
      fail(path + ": tensor '" + tensor->name + "' has shape " +
           shapeString(tensor->shape) + ", but " + describe(arg) + " does not");
    if (!canReadAs(tensor->dtype, arg.type.dtype))
      fail(path + ": tensor '" + tensor->name + "' is " +
           safetensorsName(tensor->dtype) + ", which cannot be read as " +
           describe(arg));
    readAs(tensor->dtype, tensor->data, tensor->elements, arg.type.dtype, out,
           path + ": tensor '" + tensor->name + "'");
  }
  if (kind == StateFile::Parameters)
    return 0;
  const std::string *step = file.findMetadata("step");
  if (!step)
    fail(path + ": no 'step' in __metadata__ (a --resume file records the "
                "step of its last update)");
  return parseStep(path, *step);
}

void zshard::rt::saveState(const Manifest &manifest, const StepBuffers &buffers,
                           const std::string &path, int64_t step) {
  std::vector<TensorToWrite> tensors;
  for (ArgRole role : {ArgRole::Param, ArgRole::OptState})
    for (const ArgumentDesc &arg : manifest.arguments)
      if (arg.role == role)
        tensors.push_back({arg.name, arg.type.dtype, arg.type.shape,
                           buffers.argument(size_t(arg.index))});
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"step", std::to_string(step)}};
  if (const std::string *model = manifest.findModuleAttr("zshard.model"))
    metadata.emplace_back("model", *model);
  metadata.emplace_back("producer", "zshard-run");
  metadata.emplace_back("signature", manifest.signature);
  writeSafetensors(path, tensors, metadata);
}
