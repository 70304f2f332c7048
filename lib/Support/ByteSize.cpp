//===- ByteSize.cpp - Byte sizes as users write them ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Support/ByteSize.h"

#include <utility>

std::optional<int64_t> mlir::zshard::parseByteSize(llvm::StringRef text) {
  text = text.trim();
  static const std::pair<llvm::StringRef, double> units[] = {
      {"TiB", 1024.0 * 1024 * 1024 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},
      {"MiB", 1024.0 * 1024},
      {"KiB", 1024.0},
      {"TB", 1e12},
      {"GB", 1e9},
      {"MB", 1e6},
      {"KB", 1e3},
      {"B", 1.0}};
  double scale = 1.0;
  for (auto [suffix, factor] : units)
    if (text.consume_back(suffix)) {
      scale = factor;
      break;
    }
  double value;
  if (text.trim().getAsDouble(value) || !(value > 0) || value * scale > 9e18)
    return std::nullopt;
  return int64_t(value * scale);
}
