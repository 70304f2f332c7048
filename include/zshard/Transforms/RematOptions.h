//===- RematOptions.h - zshard-remat's checkpointing policy ----*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The policy zshard-remat takes as its typed `policy` option (Passes.td),
// which the sharding pipeline, --auto and zshard-compile's --remat pass
// through: one type, one parser (parseRematPolicy), one spelling
// (operator<<), so that `policy=every=2` in a pass pipeline and
// `--remat every=2` on zshard-compile mean and print the same.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TRANSFORMS_REMATOPTIONS_H
#define ZSHARD_TRANSFORMS_REMATOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace mlir::zshard {

/// Which transformer blocks zshard-remat checkpoints.
struct RematPolicy {
  enum class Kind {
    /// Nothing.
    None,
    /// Every block.
    All,
    /// Blocks 0, K, 2K, ... in forward order (K = `every`).
    Every,
    /// Every block, keeping matrix-product outputs saved.
    Selective,
    /// The fewest recomputed FLOPs whose saved activations fit in `budget`
    /// bytes.
    Budget,
  };

  Kind kind = Kind::None;
  /// Every: K >= 1.
  int64_t every = 0;
  /// Budget: bytes >= 1.
  int64_t budget = 0;

  static RematPolicy none() { return {}; }
  static RematPolicy all() { return {Kind::All, 0, 0}; }
  static RematPolicy selective() { return {Kind::Selective, 0, 0}; }
  static RematPolicy everyK(int64_t k) { return {Kind::Every, k, 0}; }
  static RematPolicy budgetBytes(int64_t bytes) {
    return {Kind::Budget, 0, bytes};
  }

  bool isNone() const { return kind == Kind::None; }
  bool operator==(const RematPolicy &other) const {
    return kind == other.kind && every == other.every && budget == other.budget;
  }
  bool operator!=(const RematPolicy &other) const { return !(*this == other); }
};

/// The words a policy is written with, for messages and --help.
inline constexpr llvm::StringLiteral kRematPolicySyntax =
    "none, all, every=K, selective or budget=BYTES";

/// Parses `none`, `all`, `every=K` (K >= 1), `selective` or `budget=BYTES`
/// (a byte size: `1048576`, `64MiB`, `1.5GB`). On failure returns false and
/// sets `error` to one line naming what is wrong.
bool parseRematPolicy(llvm::StringRef text, RematPolicy &policy,
                      std::string &error);

/// Prints `policy` as parseRematPolicy reads it (budgets in bytes).
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const RematPolicy &policy);

} // namespace mlir::zshard

namespace llvm::cl {

/// Lets a pass or pipeline option hold a RematPolicy (`policy=every=2`).
extern template class basic_parser<mlir::zshard::RematPolicy>;

template <>
class parser<mlir::zshard::RematPolicy>
    : public basic_parser<mlir::zshard::RematPolicy> {
public:
  parser(Option &option) : basic_parser(option) {}

  bool parse(Option &option, StringRef argName, StringRef arg,
             mlir::zshard::RematPolicy &value);

  StringRef getValueName() const override { return "policy"; }

  void printOptionDiff(const Option &option,
                       const mlir::zshard::RematPolicy &value,
                       const OptVal &defaultValue, size_t globalWidth) const;

  void anchor() override;
};

} // namespace llvm::cl

#endif // ZSHARD_TRANSFORMS_REMATOPTIONS_H
