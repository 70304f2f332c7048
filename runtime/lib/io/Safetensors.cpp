//===- Safetensors.cpp - safetensors files --------------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "io/Safetensors.h"


#include "core/Failure.h"
#include "io/FileBytes.h"

#include "zshard/abi/Fnv1a.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <tuple>

using namespace zshard::rt;
using Json = nlohmann::ordered_json;

namespace {

/// Reads a JSON integer that must be non-negative and fit in int64.
bool nonNegativeInt(const Json &value, int64_t &out) {
  if (value.is_number_unsigned()) {
    uint64_t v = value.get<uint64_t>();
    if (v > uint64_t(INT64_MAX))
      return false;
    out = int64_t(v);
    return true;
  }
  if (value.is_number_integer()) {
    out = value.get<int64_t>();
    return out >= 0;
  }
  return false;
}

} // namespace

SafetensorsFile SafetensorsFile::read(const std::string &path) {
  return parse(readFileBytes(path), path);
}

SafetensorsFile SafetensorsFile::parse(std::vector<unsigned char> bytes,
                                       std::string path) {
  SafetensorsFile file;
  file.filePath = std::move(path);
  auto bad = [&](const std::string &problem) {
    fail(file.filePath + ": invalid safetensors file: " + problem);
  };
  file.buffer = std::move(bytes);
  const std::vector<unsigned char> &buf = file.buffer;
  uint64_t size = buf.size();
  if (size < 8)
    bad("truncated: " + std::to_string(size) +
        " bytes, need at least 8 for the header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = n << 8 | buf[i];
  if (n > size - 8)
    bad("header length " + std::to_string(n) +
        " runs past the end of the file (" + std::to_string(size - 8) +
        " bytes follow the length)");
  if (n > maxSafetensorsHeader)
    bad("header length " + std::to_string(n) + " exceeds the limit of " +
        std::to_string(maxSafetensorsHeader) + " bytes");

  Json header;
  try {
    header = Json::parse(buf.begin() + 8, buf.begin() + 8 + n);
  } catch (const Json::exception &e) {
    bad(std::string("header is not valid JSON (") + e.what() + ")");
  }
  if (!header.is_object())
    bad(std::string("header must be a JSON object, got ") + header.type_name());

  uint64_t dataLen = size - 8 - n;
  const unsigned char *data = buf.data() + 8 + n;
  std::vector<std::tuple<int64_t, int64_t, std::string>> spans;
  for (auto &[name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (entry.is_null())
        continue;
      if (!entry.is_object())
        bad("__metadata__ must be an object mapping strings to strings");
      for (auto &[key, value] : entry.items()) {
        if (!value.is_string())
          bad("__metadata__ must be an object mapping strings to strings");
        file.meta.emplace_back(key, value.get<std::string>());
      }
      continue;
    }
    std::string where = "tensor '" + name + "'";
    if (!entry.is_object() || entry.size() != 3 || !entry.contains("dtype") ||
        !entry.contains("shape") || !entry.contains("data_offsets"))
      bad(where + ": entry must be an object with exactly dtype, shape and "
                  "data_offsets");
    TensorView view;
    view.name = name;
    const Json &dtype = entry["dtype"];
    std::optional<DType> parsed;
    if (dtype.is_string())
      parsed = parseSafetensorsDType(dtype.get<std::string>());
    if (!parsed)
      bad(where + ": unknown dtype " +
          (dtype.is_string() ? "'" + dtype.get<std::string>() + "'"
                             : dtype.dump()) +
          " (supported: " + safetensorsDTypeList() + ")");
    view.dtype = *parsed;
    const Json &shape = entry["shape"];
    bool shapeOk = shape.is_array();
    if (shapeOk)
      for (const Json &dim : shape) {
        int64_t value;
        if (!nonNegativeInt(dim, value)) {
          shapeOk = false;
          break;
        }
        view.shape.push_back(value);
      }
    if (!shapeOk)
      bad(where + ": shape must be a list of non-negative integers, got " +
          shape.dump());
    const Json &offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 ||
        !offsets[0].is_number_integer() || !offsets[1].is_number_integer())
      bad(where + ": data_offsets must be two integers, got " + offsets.dump());
    int64_t begin = 0, end = 0;
    bool inRange = nonNegativeInt(offsets[0], begin) &&
                   nonNegativeInt(offsets[1], end) && begin <= end &&
                   uint64_t(end) <= dataLen;
    if (!inRange)
      bad(where + ": data_offsets [" + offsets[0].dump() + ", " +
          offsets[1].dump() + "]" + " out of range: the data section has " +
          std::to_string(dataLen) + " bytes");
    uint64_t elements = 0, nbytes = 0;
    if (!shapeElements(view.shape, elements) ||
        __builtin_mul_overflow(elements, dtypeSize(view.dtype), &nbytes) ||
        uint64_t(end - begin) != nbytes)
      bad(where + ": data_offsets [" + std::to_string(begin) + ", " +
          std::to_string(end) + "] span " + std::to_string(end - begin) +
          " bytes but " + safetensorsName(view.dtype) + " " +
          shapeString(view.shape) + " needs " +
          (shapeElements(view.shape, elements) ? std::to_string(nbytes)
                                               : std::string("too many")));
    view.data = data + begin;
    view.bytes = nbytes;
    view.elements = elements;
    spans.emplace_back(begin, end, name);
    file.views.push_back(std::move(view));
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (std::get<0>(spans[i]) < std::get<1>(spans[i - 1]))
      bad("tensors '" + std::get<2>(spans[i - 1]) + "' and '" +
          std::get<2>(spans[i]) + "' overlap in the data section");
  return file;
}

const TensorView *SafetensorsFile::find(std::string_view name) const {
  for (const TensorView &view : views)
    if (view.name == name)
      return &view;
  return nullptr;
}

const std::string *SafetensorsFile::findMetadata(std::string_view key) const {
  for (const auto &[k, v] : meta)
    if (k == key)
      return &v;
  return nullptr;
}

std::string zshard::rt::dataChecksum(const std::vector<TensorToWrite> &tensors) {
  uint64_t hash = zshard_abi::fnv1aOffsetBasis;
  for (const TensorToWrite &tensor : tensors) {
    uint64_t elements = 0;
    if (!shapeElements(tensor.shape, elements))
      continue;
    hash = zshard_abi::fnv1a64(tensor.data, elements * dtypeSize(tensor.dtype),
                               hash);
  }
  return "fnv1a64:" + zshard_abi::hex16(hash);
}

std::string zshard::rt::dataChecksum(const std::vector<TensorView> &tensors) {
  uint64_t hash = zshard_abi::fnv1aOffsetBasis;
  for (const TensorView &tensor : tensors)
    hash = zshard_abi::fnv1a64(tensor.data, tensor.bytes, hash);
  return "fnv1a64:" + zshard_abi::hex16(hash);
}

void zshard::rt::verifyChecksum(const SafetensorsFile &file) {
  const std::string *recorded = file.findMetadata(checksumKey);
  if (!recorded)
    return;
  std::string actual = dataChecksum(file.tensors());
  if (*recorded != actual)
    fail(file.path() + ": checksum mismatch (recorded " + *recorded +
         ", data has " + actual +
         "): the file is corrupt or was not written completely");
}

void zshard::rt::writeSafetensors(
    const std::string &path, const std::vector<TensorToWrite> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto &[key, value] : metadata)
      meta[key] = value;
    header["__metadata__"] = std::move(meta);
  }
  uint64_t offset = 0;
  std::vector<uint64_t> sizes;
  for (const TensorToWrite &tensor : tensors) {
    if (tensor.name == "__metadata__")
      fail(path + ": '__metadata__' is not a valid tensor name");
    if (header.contains(tensor.name))
      fail(path + ": tensor '" + tensor.name + "' is given twice");
    uint64_t elements = 0, nbytes = 0;
    if (!shapeElements(tensor.shape, elements) ||
        __builtin_mul_overflow(elements, dtypeSize(tensor.dtype), &nbytes))
      fail(path + ": tensor '" + tensor.name + "' has an invalid shape " +
           shapeString(tensor.shape));
    header[tensor.name] = {{"dtype", safetensorsName(tensor.dtype)},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + nbytes}}};
    sizes.push_back(nbytes);
    offset += nbytes;
  }
  std::string text = header.dump(-1, ' ', /*ensure_ascii=*/true);
  text.append((8 - text.size() % 8) % 8, ' ');

  unsigned char length[8];
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<unsigned char>(n >> (8 * i));
  AtomicFileWriter out(path);
  out.write(length, sizeof(length));
  out.write(text.data(), text.size());
  for (size_t i = 0; i < tensors.size(); ++i)
    out.write(tensors[i].data, sizes[i]);
  out.commit();
}
