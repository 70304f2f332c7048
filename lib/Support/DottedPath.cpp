//===- DottedPath.cpp - The syntax of dotted module paths -----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Support/DottedPath.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

bool zshard::isPathIndex(StringRef part) {
  return !part.empty() && llvm::all_of(part, llvm::isDigit);
}

bool zshard::isPathComponent(StringRef part) {
  if (isPathIndex(part))
    return true;
  return !part.empty() &&
         (llvm::isAlpha(part.front()) || part.front() == '_') &&
         llvm::all_of(part,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

bool zshard::isValidDottedPath(StringRef path, bool allowEmpty) {
  if (path.empty())
    return allowEmpty;
  SmallVector<StringRef> parts;
  path.split(parts, '.');
  return llvm::all_of(parts, isPathComponent);
}

std::optional<std::string> zshard::matchPathPattern(StringRef path,
                                                    ArrayRef<StringRef> pattern,
                                                    bool proper) {
  SmallVector<StringRef> parts;
  path.split(parts, '.');
  if (parts.size() < pattern.size() + (proper ? 1 : 0))
    return std::nullopt;
  for (auto [want, part] : llvm::zip(pattern, parts))
    if (want == "<i>" ? !isPathIndex(part) : want != part)
      return std::nullopt;
  return llvm::join(ArrayRef<StringRef>(parts).take_front(pattern.size()), ".");
}

std::optional<SmallVector<StringRef>> zshard::parsePathPattern(StringRef text) {
  SmallVector<StringRef> parts;
  text.trim().split(parts, '.');
  if (!llvm::all_of(parts, [](StringRef part) {
        return part == "<i>" || isPathComponent(part);
      }))
    return std::nullopt;
  return parts;
}

bool zshard::matchesParameter(StringRef pattern, StringRef name) {
  std::optional<SmallVector<StringRef>> want = parsePathPattern(pattern);
  return want && matchPathPattern(name, *want, /*proper=*/true).has_value();
}
