//===- InitSpec.cpp - Deterministic initialisation from init specs --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/InitSpec.h"

#include "core/Failure.h"
#include "core/Fnv1a.h"
#include "core/Philox.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace zshard::rt;

namespace {

/// A strict scanner over one init spec; every problem names the spec.
class SpecScanner {
public:
  explicit SpecScanner(std::string_view text) : text(text) {}

  [[noreturn]] void error(const std::string &problem) const {
    fail("init spec '" + std::string(text) + "': " + problem);
  }

  void skipSpaces() {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }

  void expect(char ch) {
    if (pos >= text.size() || text[pos] != ch)
      error(std::string("expected '") + ch + "' at offset " +
            std::to_string(pos));
    ++pos;
  }

  /// A decimal float: [+-]? digits [. digits] [(e|E) [+-]? digits], with at
  /// least one digit before or after the point.
  double number(const char *what) {
    skipSpaces();
    size_t start = pos;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
      ++pos;
    size_t digits = countDigits();
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      digits += countDigits();
    }
    if (digits == 0)
      error(std::string(what) + " is not a decimal number at offset " +
            std::to_string(start));
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (countDigits() == 0)
        error(std::string(what) + " has an exponent without digits");
    }
    std::string literal(text.substr(start, pos - start));
    double value = std::strtod(literal.c_str(), nullptr);
    if (!std::isfinite(value))
      error(std::string(what) + " " + literal + " is out of range");
    skipSpaces();
    return value;
  }

  void expectEnd() {
    if (pos != text.size())
      error("unexpected '" + std::string(text.substr(pos)) + "' at offset " +
            std::to_string(pos));
  }

  bool consume(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }

private:
  size_t countDigits() {
    size_t start = pos;
    while (pos < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[pos])))
      ++pos;
    return pos - start;
  }

  std::string_view text;
  size_t pos = 0;
};

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

} // namespace

InitSpec zshard::rt::parseInitSpec(std::string_view text) {
  SpecScanner scanner(text);
  InitSpec spec;
  if (text == "zeros") {
    spec.kind = InitSpec::Kind::Zeros;
    return spec;
  }
  if (text == "ones") {
    spec.kind = InitSpec::Kind::Ones;
    return spec;
  }
  if (text == "param") {
    spec.kind = InitSpec::Kind::Param;
    return spec;
  }
  bool normal = scanner.consume("normal(");
  if (!normal && !scanner.consume("uniform("))
    scanner.error("expected normal(MEAN, STD), uniform(LOW, HIGH), zeros, "
                  "ones or param");
  spec.kind = normal ? InitSpec::Kind::Normal : InitSpec::Kind::Uniform;
  spec.a = scanner.number(normal ? "MEAN" : "LOW");
  scanner.expect(',');
  spec.b = scanner.number(normal ? "STD" : "HIGH");
  scanner.expect(')');
  scanner.expectEnd();
  if (normal && spec.b < 0)
    scanner.error("STD must be >= 0");
  if (!normal && !(spec.a < spec.b))
    scanner.error("LOW must be < HIGH");
  return spec;
}

bool zshard::rt::initFitsDType(const InitSpec &spec, DType dtype) {
  return spec.kind == InitSpec::Kind::Zeros ||
         spec.kind == InitSpec::Kind::Ones ||
         spec.kind == InitSpec::Kind::Param || isFloatDType(dtype);
}

void zshard::rt::initTensor(const InitSpec &spec, std::string_view name,
                            uint64_t seed, DType dtype, uint64_t begin,
                            uint64_t end, void *out) {
  CounterRng rng(fnv1a64(name), seed);
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
    for (uint64_t i = 0; i < count; ++i)
      storeFromDouble(dtype, out, i, spec.a + spec.b * rng.normal(begin + i));
    return;
  case InitSpec::Kind::Uniform:
    for (uint64_t i = 0; i < count; ++i) {
      double value = spec.a + (spec.b - spec.a) * rng.uniform(begin + i);
      storeFromDouble(dtype, out, i, value);
      if (loadAsDouble(dtype, out, i) >= spec.b)
        storeBelow(dtype, out, i, spec.b);
    }
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
