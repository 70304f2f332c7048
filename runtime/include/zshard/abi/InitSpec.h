//===- InitSpec.h - the init-spec grammar -----------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The init specs of docs/contract.md, parsed and spelled in one place for
/// the compiler (which checks them on the step and writes them into the
/// manifest) and the runtime (which reads them back and initialises state):
///
///   normal(MEAN, STD) | uniform(LOW, HIGH) | zeros | ones | param
///
/// Numbers are decimal floats ("-1", "0.02", "1e-3"; no inf, nan or hex),
/// spaces are allowed only around numbers, STD >= 0 and LOW < HIGH. `param`
/// is for optimizer state that starts as a copy of its parameter.
///
/// Header-only C++17 with no LLVM or MLIR dependency, and no exceptions.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ABI_INITSPEC_H
#define ZSHARD_ABI_INITSPEC_H

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace zshard_abi {

/// A parsed init spec.
struct InitSpec {
  enum class Kind { Normal, Uniform, Zeros, Ones, Param };
  Kind kind = Kind::Zeros;
  double a = 0.0; ///< MEAN of normal, LOW of uniform.
  double b = 0.0; ///< STD of normal, HIGH of uniform.

  /// Parses \p text strictly (see the file comment). On failure returns
  /// std::nullopt and, when \p why is given, the problem without the spec
  /// ("expected ',' at offset 8").
  static std::optional<InitSpec> parse(std::string_view text,
                                       std::string *why = nullptr);

  /// The canonical spelling, which parse() reads back exactly: numbers in
  /// their shortest round-trip form ("normal(0, 0.02)").
  std::string str() const;

  /// The bits of \p value.
  static std::uint64_t bits(double value) {
    std::uint64_t result;
    std::memcpy(&result, &value, sizeof(result));
    return result;
  }

  /// Equal when of one kind with the same numbers, bit for bit (so -0 and 0
  /// differ, as their spellings do).
  friend bool operator==(const InitSpec &lhs, const InitSpec &rhs) {
    return lhs.kind == rhs.kind && bits(lhs.a) == bits(rhs.a) &&
           bits(lhs.b) == bits(rhs.b);
  }
  friend bool operator!=(const InitSpec &lhs, const InitSpec &rhs) {
    return !(lhs == rhs);
  }
};

namespace detail {

/// A strict scanner over one init spec.
class InitSpecScanner {
public:
  explicit InitSpecScanner(std::string_view text) : text(text) {}

  /// The first problem found, "" while there is none.
  std::string problem;

  bool fail(std::string message) {
    if (problem.empty())
      problem = std::move(message);
    return false;
  }

  void skipSpaces() {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }

  bool expect(char ch) {
    if (pos >= text.size() || text[pos] != ch)
      return fail(std::string("expected '") + ch + "' at offset " +
                  std::to_string(pos));
    ++pos;
    return true;
  }

  bool consume(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }

  /// A decimal float: [+-]? digits [. digits] [(e|E) [+-]? digits], with at
  /// least one digit before or after the point, and spaces around it.
  bool number(const char *what, double &value) {
    skipSpaces();
    size_t start = pos;
    bool negative = false;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
      negative = text[pos++] == '-';
    size_t body = pos;
    size_t digits = countDigits();
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      digits += countDigits();
    }
    if (digits == 0)
      return fail(std::string(what) + " is not a decimal number at offset " +
                  std::to_string(start));
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (countDigits() == 0)
        return fail(std::string(what) + " has an exponent without digits");
    }
    std::string_view literal = text.substr(start, pos - start);
    const char *first = text.data() + body, *last = text.data() + pos;
    auto [end, error] =
        std::from_chars(first, last, value, std::chars_format::general);
    if (error != std::errc() || end != last || !std::isfinite(value))
      return fail(std::string(what) + " " + std::string(literal) +
                  " is out of range");
    if (negative)
      value = -value;
    skipSpaces();
    return true;
  }

  bool expectEnd() {
    if (pos != text.size())
      return fail("unexpected '" + std::string(text.substr(pos)) +
                  "' at offset " + std::to_string(pos));
    return true;
  }

private:
  size_t countDigits() {
    size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
      ++pos;
    return pos - start;
  }

  std::string_view text;
  size_t pos = 0;
};

/// The shortest decimal spelling that reads back as the same double.
inline std::string shortestDecimal(double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

} // namespace detail

inline std::optional<InitSpec> InitSpec::parse(std::string_view text,
                                               std::string *why) {
  InitSpec spec;
  if (text == "zeros" || text == "ones" || text == "param") {
    spec.kind = text == "zeros"  ? Kind::Zeros
                : text == "ones" ? Kind::Ones
                                 : Kind::Param;
    return spec;
  }
  detail::InitSpecScanner scanner(text);
  bool normal = scanner.consume("normal(");
  bool ok = normal || scanner.consume("uniform(") ||
            scanner.fail("expected normal(MEAN, STD), uniform(LOW, HIGH), "
                         "zeros, ones or param");
  spec.kind = normal ? Kind::Normal : Kind::Uniform;
  ok = ok && scanner.number(normal ? "MEAN" : "LOW", spec.a) &&
       scanner.expect(',') && scanner.number(normal ? "STD" : "HIGH", spec.b) &&
       scanner.expect(')') && scanner.expectEnd();
  if (ok && normal && spec.b < 0)
    ok = scanner.fail("STD must be >= 0");
  if (ok && !normal && !(spec.a < spec.b))
    ok = scanner.fail("LOW must be < HIGH");
  if (ok)
    return spec;
  if (why)
    *why = scanner.problem;
  return std::nullopt;
}

inline std::string InitSpec::str() const {
  switch (kind) {
  case Kind::Zeros:
    return "zeros";
  case Kind::Ones:
    return "ones";
  case Kind::Param:
    return "param";
  case Kind::Normal:
    return "normal(" + detail::shortestDecimal(a) + ", " +
           detail::shortestDecimal(b) + ")";
  case Kind::Uniform:
    return "uniform(" + detail::shortestDecimal(a) + ", " +
           detail::shortestDecimal(b) + ")";
  }
  return "?";
}

} // namespace zshard_abi

#endif // ZSHARD_ABI_INITSPEC_H
