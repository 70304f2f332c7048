//===- InitSpec.cpp - Deterministic initialisation from init specs --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/InitSpec.h"

#include "core/Failure.h"
#include "core/Philox.h"

#include "zshard/abi/Fnv1a.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace zshard::rt;

namespace {

/// Stores in element \p index the largest value of float type \p dtype below
/// \p high, for a uniform draw that rounding pushed up to HIGH.
void storeBelow(DType dtype, void *out, uint64_t index, double high) {
  storeFromDouble(dtype, out, index, high);
  if (loadAsDouble(dtype, out, index) < high)
    return; // HIGH itself rounded down: the largest value below it
  switch (dtype) {
  case DType::F64:
    return storeFromDouble(dtype, out, index, std::nextafter(high, -INFINITY));
  case DType::F32:
    return storeFromDouble(dtype, out, index,
                           std::nextafter(float(high), -INFINITY));
  default: {
    // bf16 and f16 are sign-magnitude 16-bit patterns: one unit down.
    uint16_t bits;
    std::memcpy(&bits, static_cast<char *>(out) + index * 2, 2);
    if (bits & 0x8000)
      ++bits; // negative: one unit more negative
    else if (bits == 0)
      bits = 0x8001; // +0: the smallest negative subnormal
    else
      --bits;
    std::memcpy(static_cast<char *>(out) + index * 2, &bits, 2);
    return;
  }
  }
}

/// Elements a thread draws at least: below twice this, one thread does all
/// (a thread costs tens of microseconds; a draw, tens of nanoseconds).
constexpr uint64_t kElementsPerThread = uint64_t(1) << 17;

/// Calls \p body(from, to) on contiguous ranges covering [0, count), on up
/// to \p threads threads (0: the hardware's), the calling thread included.
template <typename Body>
void forElementRanges(uint64_t count, unsigned threads, Body body) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  uint64_t parts = std::min<uint64_t>(
      threads, std::max<uint64_t>(1, count / kElementsPerThread));
  if (parts <= 1) {
    body(0, count);
    return;
  }
  uint64_t step = (count + parts - 1) / parts;
  std::vector<std::thread> workers;
  for (uint64_t p = 1; p < parts; ++p)
    workers.emplace_back(body, std::min(count, p * step),
                         std::min(count, (p + 1) * step));
  body(0, std::min(count, step));
  for (std::thread &worker : workers)
    worker.join();
}

} // namespace

InitSpec zshard::rt::parseInitSpec(std::string_view text) {
  std::string why;
  std::optional<InitSpec> spec = InitSpec::parse(text, &why);
  if (!spec)
    fail("init spec '" + std::string(text) + "': " + why);
  return *spec;
}

bool zshard::rt::initFitsDType(const InitSpec &spec, DType dtype) {
  return spec.kind == InitSpec::Kind::Zeros ||
         spec.kind == InitSpec::Kind::Ones ||
         spec.kind == InitSpec::Kind::Param || isFloatDType(dtype);
}

void zshard::rt::initTensor(const InitSpec &spec, std::string_view name,
                            uint64_t seed, DType dtype, uint64_t begin,
                            uint64_t end, void *out, unsigned threads) {
  CounterRng rng(zshard_abi::fnv1a64(name), seed);
  uint64_t count = end > begin ? end - begin : 0;
  switch (spec.kind) {
  case InitSpec::Kind::Param:
    fail("init spec 'param' copies a parameter: use initFromParam");
  case InitSpec::Kind::Zeros:
  case InitSpec::Kind::Ones:
    for (uint64_t i = 0; i < count; ++i)
      storeFromDouble(dtype, out, i,
                      spec.kind == InitSpec::Kind::Ones ? 1.0 : 0.0);
    return;
  case InitSpec::Kind::Normal:
    forElementRanges(count, threads, [&](uint64_t from, uint64_t to) {
      for (uint64_t i = from; i < to; ++i)
        storeFromDouble(dtype, out, i, spec.a + spec.b * rng.normal(begin + i));
    });
    return;
  case InitSpec::Kind::Uniform:
    forElementRanges(count, threads, [&](uint64_t from, uint64_t to) {
      for (uint64_t i = from; i < to; ++i) {
        double value = spec.a + (spec.b - spec.a) * rng.uniform(begin + i);
        storeFromDouble(dtype, out, i, value);
        if (loadAsDouble(dtype, out, i) >= spec.b)
          storeBelow(dtype, out, i, spec.b);
      }
    });
    return;
  }
}

void zshard::rt::initFromParam(const void *param, DType paramType, DType dtype,
                               uint64_t begin, uint64_t end, void *out) {
  const char *source =
      static_cast<const char *>(param) + begin * dtypeSize(paramType);
  uint64_t count = end > begin ? end - begin : 0;
  if (paramType == dtype) {
    std::memcpy(out, source, count * dtypeSize(dtype));
    return;
  }
  for (uint64_t i = 0; i < count; ++i)
    storeFromDouble(dtype, out, i, loadAsDouble(paramType, source, i));
}
