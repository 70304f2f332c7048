//===- TorchStateDict.cpp - The model's torch state_dict ------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/TorchStateDict.h"

#include "core/Failure.h"
#include "core/Shape.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <optional>

using namespace zshard::rt;

namespace {

using Json = nlohmann::json;

[[noreturn]] void badRecord(const std::string &why) {
  fail(std::string("the artifact's module attribute ") + torchStateDictAttr +
       ": " + why + " (re-export the model with zshard-export)");
}

std::vector<unsigned char> parseHex(const std::string &name,
                                    const std::string &text) {
  auto digit = [&](char ch) -> int {
    if (ch >= '0' && ch <= '9')
      return ch - '0';
    if (ch >= 'a' && ch <= 'f')
      return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
      return ch - 'A' + 10;
    badRecord("buffer '" + name + "': data is not hexadecimal");
  };
  if (text.size() % 2)
    badRecord("buffer '" + name + "': data has an odd number of digits");
  std::vector<unsigned char> bytes(text.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<unsigned char>(digit(text[2 * i]) * 16 +
                                          digit(text[2 * i + 1]));
  return bytes;
}

/// The step's parameters (arguments and members of units) and persistent
/// buffer arguments by name.
const StateTensor *findParam(const std::vector<StateTensor> &state,
                             const std::string &name) {
  for (const StateTensor &t : state)
    if ((t.isParam || (t.isBuffer && t.persistent)) && t.name == name)
      return &t;
  return nullptr;
}

TorchEntry parseEntry(const Json &item, const std::vector<StateTensor> &state) {
  if (!item.is_object() || !item.contains("name") ||
      !item["name"].is_string() || !item.contains("dtype") ||
      !item["dtype"].is_string() || !item.contains("shape") ||
      !item["shape"].is_array())
    badRecord("an entry without name, dtype and shape");
  TorchEntry e;
  e.name = item["name"].get<std::string>();
  std::optional<DType> dtype =
      parseSafetensorsDType(item["dtype"].get<std::string>());
  if (!dtype)
    badRecord("'" + e.name + "': unknown dtype '" +
              item["dtype"].get<std::string>() + "'");
  e.dtype = *dtype;
  for (const Json &dim : item["shape"]) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0)
      badRecord("'" + e.name + "': bad shape");
    e.shape.push_back(dim.get<int64_t>());
  }
  if (item.contains("param")) {
    if (!item["param"].is_string())
      badRecord("'" + e.name + "': param is not a string");
    e.param = item["param"].get<std::string>();
    const StateTensor *param = findParam(state, e.param);
    if (!param)
      badRecord("'" + e.name + "' is held by param '" + e.param +
                "', which the step does not have");
    if (param->shape != e.shape)
      badRecord("'" + e.name + "' has shape " + shapeString(e.shape) +
                ", and its param '" + e.param + "' " +
                shapeString(param->shape));
    return e;
  }
  if (!item.contains("data") || !item["data"].is_string())
    badRecord("'" + e.name + "' has neither a param nor data");
  e.data = parseHex(e.name, item["data"].get<std::string>());
  uint64_t elements = 0;
  if (!shapeElements(e.shape, elements) ||
      e.data.size() != elements * dtypeSize(e.dtype))
    badRecord("buffer '" + e.name + "': " + std::to_string(e.data.size()) +
              " bytes of data for " + safetensorsName(e.dtype) + " " +
              shapeString(e.shape));
  return e;
}

std::string describe(const TorchEntry &e) {
  return std::string(e.isBuffer() ? "buffer '" : "tied weight '") + e.name +
         "' (" + manifestName(e.dtype) + " " + shapeString(e.shape) + ")";
}

} // namespace

std::vector<TorchEntry> zshard::rt::torchStateDict(const Manifest &manifest) {
  std::vector<StateTensor> state = stateTensors(manifest);
  std::vector<TorchEntry> entries;
  const std::string *recorded = manifest.findModuleAttr(torchStateDictAttr);
  if (!recorded) {
    for (const StateTensor &t : state)
      if (t.isParam || (t.isBuffer && t.persistent))
        entries.push_back({t.name, t.dtype, t.shape, t.name, {}});
    return entries;
  }
  Json list = Json::parse(*recorded, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array())
    badRecord("not a JSON list");
  for (const Json &item : list)
    entries.push_back(parseEntry(item, state));
  return entries;
}

void zshard::rt::saveTorchState(
    const Manifest &manifest, const StepBuffers &buffers,
    const std::map<int64_t, std::vector<unsigned char>> &units,
    const std::string &path, int64_t step) {
  std::vector<StateTensor> state = stateTensors(manifest);
  std::vector<TorchEntry> entries = torchStateDict(manifest);
  std::vector<TensorToWrite> tensors;
  // Parameters stored in another dtype than their key's, converted.
  std::vector<std::vector<unsigned char>> converted;
  converted.reserve(entries.size());
  for (const TorchEntry &e : entries) {
    if (e.isBuffer()) {
      tensors.push_back({e.name, e.dtype, e.shape, e.data.data()});
      continue;
    }
    const StateTensor &param = *findParam(state, e.param);
    const void *data = consolidatedData(param, buffers, units, path);
    if (param.dtype != e.dtype) {
      std::vector<unsigned char> &out =
          converted.emplace_back(param.elements * dtypeSize(e.dtype));
      for (uint64_t i = 0; i < param.elements; ++i)
        storeFromDouble(e.dtype, out.data(), i,
                        loadAsDouble(param.dtype, data, i));
      data = out.data();
    }
    tensors.push_back({e.name, e.dtype, e.shape, data});
  }
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"format", "pt"},
      {"step", std::to_string(step)},
      {"producer", "zshard-run"},
      {"signature", manifest.signature},
      {checksumKey, dataChecksum(tensors)}};
  writeSafetensors(path, tensors, metadata);
}

TorchKeys::TorchKeys(const Manifest &manifest) {
  if (!manifest.findModuleAttr(torchStateDictAttr))
    return;
  for (TorchEntry &e : torchStateDict(manifest)) {
    if (!e.isBuffer())
      position.emplace(e.param, position.size());
    if (e.isBuffer() || e.isTied())
      extra.push_back(std::move(e));
  }
}

void TorchKeys::sortParams(std::vector<StateTensor> &state) const {
  if (position.empty())
    return;
  auto end =
      std::stable_partition(state.begin(), state.end(),
                            [](const StateTensor &t) { return t.isParam; });
  auto rank = [&](const StateTensor &t) {
    auto it = position.find(t.name);
    return it == position.end() ? position.size() : it->second;
  };
  std::stable_sort(state.begin(), end,
                   [&](const StateTensor &a, const StateTensor &b) {
                     return rank(a) < rank(b);
                   });
}

bool TorchKeys::accept(const SafetensorsFile &file, const TensorView &tensor,
                       const std::string &path) const {
  const TorchEntry *entry = nullptr;
  for (const TorchEntry &e : extra)
    if (e.name == tensor.name)
      entry = &e;
  if (!entry)
    return false;
  if (tensor.shape != entry->shape)
    fail(path + ": tensor '" + tensor.name + "' has shape " +
         shapeString(tensor.shape) + ", but " + describe(*entry) + " does not");
  if (entry->isTied()) {
    // Both keys of a tied weight (as torch's state_dict has them): they
    // must agree, since the step holds one tensor.
    const TensorView *param = file.find(entry->param);
    if (param && param->dtype == tensor.dtype && param->shape == tensor.shape &&
        std::memcmp(param->data, tensor.data, tensor.bytes) != 0)
      fail(path + ": tensor '" + tensor.name + "' differs from '" +
           entry->param +
           "', which it is tied to (the step holds one "
           "tensor for both)");
    return true;
  }
  // A folded buffer: the step computes with the values it was exported
  // with, so a file may only hold those.
  bool same = true;
  for (uint64_t i = 0; same && i < tensor.elements; ++i)
    same = loadAsDouble(tensor.dtype, tensor.data, i) ==
           loadAsDouble(entry->dtype, entry->data.data(), i);
  if (!same)
    fail(path + ": tensor '" + tensor.name + "' holds other values than " +
         describe(*entry) +
         ", which is folded into the step (re-export the model with them)");
  return true;
}

const TensorView *TorchKeys::findTied(const SafetensorsFile &file,
                                      const std::string &param) const {
  for (const TorchEntry &e : extra)
    if (e.isTied() && e.param == param)
      if (const TensorView *tensor = file.find(e.name))
        return tensor;
  return nullptr;
}
