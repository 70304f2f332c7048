//===- BlockPatterns.cpp - the indexed blocks of a step's parameters ------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Pipelines/ShardStep.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::zshard;

static bool isIndex(StringRef part) {
  return !part.empty() && llvm::all_of(part, llvm::isDigit);
}

bool zshard::matchesParameter(StringRef pattern, StringRef name) {
  SmallVector<StringRef> want, parts;
  pattern.trim().split(want, '.');
  name.split(parts, '.');
  // The parameter lives inside the module, not at its path.
  if (parts.size() <= want.size())
    return false;
  for (auto [w, part] : llvm::zip(want, parts))
    if (w == "<i>" ? !isIndex(part) : w != part)
      return false;
  return true;
}

SmallVector<std::string>
zshard::findBlockPatterns(ArrayRef<std::string> names) {
  llvm::MapVector<std::string, int64_t, std::map<std::string, unsigned>> counts;
  for (StringRef name : names) {
    SmallVector<StringRef> parts;
    name.split(parts, '.');
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (!isIndex(parts[i]))
        continue;
      SmallVector<StringRef> prefix(parts.begin(), parts.begin() + i);
      prefix.push_back("<i>");
      ++counts[llvm::join(prefix, ".")];
      break;
    }
  }
  SmallVector<std::pair<std::string, int64_t>> sorted(counts.begin(),
                                                      counts.end());
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const auto &a, const auto &b) { return a.second > b.second; });
  SmallVector<std::string> patterns;
  for (auto &entry : sorted)
    patterns.push_back(entry.first);
  return patterns;
}
