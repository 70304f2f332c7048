//===- DType.cpp - Element types of artifacts and files -------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/DType.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace zshard::rt;

namespace {

struct DTypeInfo {
  DType dtype;
  const char *manifest;
  const char *safetensors;
  size_t size;
  bool inManifest;
};

constexpr DTypeInfo dtypeTable[] = {{DType::F32, "f32", "F32", 4, true},
                                    {DType::F64, "f64", "F64", 8, true},
                                    {DType::F16, "f16", "F16", 2, true},
                                    {DType::BF16, "bf16", "BF16", 2, true},
                                    {DType::I64, "i64", "I64", 8, true},
                                    {DType::I32, "i32", "I32", 4, true},
                                    {DType::I16, "i16", "I16", 2, false},
                                    {DType::I8, "i8", "I8", 1, true},
                                    {DType::U8, "u8", "U8", 1, true},
                                    {DType::U16, "u16", "U16", 2, true},
                                    {DType::U32, "u32", "U32", 4, true},
                                    {DType::U64, "u64", "U64", 8, false},
                                    {DType::I1, "i1", "BOOL", 1, true}};

const DTypeInfo &info(DType dtype) {
  return dtypeTable[static_cast<size_t>(dtype)];
}

template <typename T> T loadRaw(const void *data, uint64_t index) {
  T value;
  std::memcpy(&value, static_cast<const char *>(data) + index * sizeof(T),
              sizeof(T));
  return value;
}

template <typename T> void storeRaw(void *data, uint64_t index, T value) {
  std::memcpy(static_cast<char *>(data) + index * sizeof(T), &value, sizeof(T));
}

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

} // namespace

std::optional<DType> zshard::rt::parseManifestDType(std::string_view name) {
  for (const DTypeInfo &entry : dtypeTable)
    if (entry.inManifest && name == entry.manifest)
      return entry.dtype;
  return std::nullopt;
}

const char *zshard::rt::manifestName(DType dtype) {
  return info(dtype).manifest;
}

const char *zshard::rt::manifestDTypeList() {
  return "f32, f64, f16, bf16, i64, i32, i8, u8, u16, u32, i1";
}

std::optional<DType> zshard::rt::parseSafetensorsDType(std::string_view name) {
  for (const DTypeInfo &entry : dtypeTable)
    if (name == entry.safetensors)
      return entry.dtype;
  return std::nullopt;
}

const char *zshard::rt::safetensorsName(DType dtype) {
  return info(dtype).safetensors;
}

const char *zshard::rt::safetensorsDTypeList() {
  return "F32, F64, F16, BF16, I64, I32, I16, I8, U8, U16, U32, U64, BOOL";
}

size_t zshard::rt::dtypeSize(DType dtype) { return info(dtype).size; }

bool zshard::rt::isFloatDType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

bool zshard::rt::isIntegerDType(DType dtype) {
  return !isFloatDType(dtype) && dtype != DType::I1;
}

float zshard::rt::bf16ToFloat(uint16_t bits) {
  return bitsFloat(uint32_t(bits) << 16);
}

uint16_t zshard::rt::floatToBf16(float value) {
  uint32_t bits = floatBits(value);
  if (std::isnan(value))
    return uint16_t((bits >> 16) | 0x0040);
  return uint16_t((uint64_t(bits) + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

float zshard::rt::halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) // infinity or NaN
    return bitsFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in float
    float magnitude = std::ldexp(float(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t zshard::rt::floatToHalf(float value) {
  uint32_t bits = floatBits(value);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  if (std::isnan(value))
    return uint16_t(sign | 0x7e00 | ((bits >> 13) & 0x3ff));
  float magnitude = std::fabs(value);
  if (magnitude >= 65520.0f) // rounds to infinity
    return uint16_t(sign | 0x7c00);
  if (magnitude < 6.103515625e-05f) {
    // Subnormal (or zero): a multiple of 2^-24; nearbyint rounds to even.
    float units = std::nearbyint(std::ldexp(magnitude, 24));
    return uint16_t(sign | uint16_t(units));
  }
  // Normal: drop 13 mantissa bits with round-to-nearest-even; a carry into
  // the exponent is the right answer.
  uint32_t abs = bits & 0x7fffffffu;
  uint32_t rounded = abs + 0xfff + ((abs >> 13) & 1);
  return uint16_t(sign | ((rounded >> 13) - (112u << 10)));
}

double zshard::rt::loadAsDouble(DType dtype, const void *data, uint64_t index) {
  switch (dtype) {
  case DType::F32:
    return loadRaw<float>(data, index);
  case DType::F64:
    return loadRaw<double>(data, index);
  case DType::F16:
    return halfToFloat(loadRaw<uint16_t>(data, index));
  case DType::BF16:
    return bf16ToFloat(loadRaw<uint16_t>(data, index));
  default:
    return double(loadAsInt(dtype, data, index));
  }
}

int64_t zshard::rt::loadAsInt(DType dtype, const void *data, uint64_t index) {
  switch (dtype) {
  case DType::I64:
    return loadRaw<int64_t>(data, index);
  case DType::I32:
    return loadRaw<int32_t>(data, index);
  case DType::I16:
    return loadRaw<int16_t>(data, index);
  case DType::I8:
    return loadRaw<int8_t>(data, index);
  case DType::U8:
    return loadRaw<uint8_t>(data, index);
  case DType::U16:
    return loadRaw<uint16_t>(data, index);
  case DType::U32:
    return loadRaw<uint32_t>(data, index);
  case DType::U64: {
    uint64_t value = loadRaw<uint64_t>(data, index);
    return value > uint64_t(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : int64_t(value);
  }
  case DType::I1:
    return loadRaw<uint8_t>(data, index) != 0;
  default:
    return int64_t(loadAsDouble(dtype, data, index));
  }
}

void zshard::rt::storeFromDouble(DType dtype, void *data, uint64_t index,
                                 double value) {
  switch (dtype) {
  case DType::F32:
    return storeRaw<float>(data, index, float(value));
  case DType::F64:
    return storeRaw<double>(data, index, value);
  case DType::F16:
    return storeRaw<uint16_t>(data, index, floatToHalf(float(value)));
  case DType::BF16:
    return storeRaw<uint16_t>(data, index, floatToBf16(float(value)));
  case DType::I64:
    return storeRaw<int64_t>(data, index, int64_t(value));
  case DType::I32:
    return storeRaw<int32_t>(data, index, int32_t(value));
  case DType::I16:
    return storeRaw<int16_t>(data, index, int16_t(value));
  case DType::I8:
    return storeRaw<int8_t>(data, index, int8_t(value));
  case DType::U8:
    return storeRaw<uint8_t>(data, index, uint8_t(value));
  case DType::U16:
    return storeRaw<uint16_t>(data, index, uint16_t(value));
  case DType::U32:
    return storeRaw<uint32_t>(data, index, uint32_t(value));
  case DType::U64:
    return storeRaw<uint64_t>(data, index, uint64_t(value));
  case DType::I1:
    return storeRaw<uint8_t>(data, index, value != 0);
  }
}

void zshard::rt::storeFromInt(DType dtype, void *data, uint64_t index,
                              int64_t value) {
  switch (dtype) {
  case DType::I64:
    return storeRaw<int64_t>(data, index, value);
  case DType::U64:
    return storeRaw<uint64_t>(data, index, uint64_t(value));
  default:
    return storeFromDouble(dtype, data, index, double(value));
  }
}

bool zshard::rt::fitsIntDType(DType dtype, int64_t value) {
  switch (dtype) {
  case DType::I64:
    return true;
  case DType::I32:
    return value >= INT32_MIN && value <= INT32_MAX;
  case DType::I16:
    return value >= INT16_MIN && value <= INT16_MAX;
  case DType::I8:
    return value >= INT8_MIN && value <= INT8_MAX;
  case DType::U8:
    return value >= 0 && value <= UINT8_MAX;
  case DType::U16:
    return value >= 0 && value <= UINT16_MAX;
  case DType::U32:
    return value >= 0 && value <= int64_t(UINT32_MAX);
  case DType::U64:
    return value >= 0;
  case DType::I1:
    return value == 0 || value == 1;
  default:
    return false;
  }
}
