//===- TensorConvert.cpp - Reading stored tensors as another dtype --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "io/TensorConvert.h"

#include "core/Failure.h"

#include <cstring>

using namespace zshard::rt;

namespace {
/// Bits of precision of a float type, to decide exact widening.
int precisionBits(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return 53;
  case DType::F32:
    return 24;
  case DType::F16:
    return 11;
  case DType::BF16:
    return 8;
  default:
    return 0;
  }
}

/// Exponent range rank, to decide exact widening (f16 < bf16 = f32 < f64).
int rangeRank(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return 3;
  case DType::F32:
  case DType::BF16:
    return 2;
  default:
    return 1;
  }
}
} // namespace

bool zshard::rt::canReadAs(DType from, DType to) {
  if (from == to)
    return true;
  if (isFloatDType(from) && isFloatDType(to))
    return precisionBits(from) <= precisionBits(to) &&
           rangeRank(from) <= rangeRank(to);
  return !isFloatDType(from) && !isFloatDType(to);
}

void zshard::rt::readAs(DType from, const void *src, uint64_t count, DType to,
                        void *dst, const std::string &what) {
  if (from == to) {
    if (count)
      std::memcpy(dst, src, count * dtypeSize(to));
    return;
  }
  if (isFloatDType(from)) {
    for (uint64_t i = 0; i < count; ++i)
      storeFromDouble(to, dst, i, loadAsDouble(from, src, i));
    return;
  }
  for (uint64_t i = 0; i < count; ++i) {
    int64_t value = loadAsInt(from, src, i);
    if (!fitsIntDType(to, value) || (from == DType::U64 && value == INT64_MAX))
      fail(what + ": element " + std::to_string(i) + " = " +
           std::to_string(value) + " does not fit " + manifestName(to));
    storeFromInt(to, dst, i, value);
  }
}
