//===- ModuleClasses.cpp - the module classes a frontend records ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/ModuleClasses.h"
#include "zshard/Analysis/ModulePaths.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::zshard;

std::string ModuleClasses::read(Attribute attr) {
  entries.clear();
  if (!attr)
    return "";
  auto dict = dyn_cast<DictionaryAttr>(attr);
  if (!dict)
    return "must be a dictionary of module path = class name strings";
  for (NamedAttribute entry : dict) {
    auto className = dyn_cast<StringAttr>(entry.getValue());
    if (!className || className.getValue().empty())
      return "the class of module '" + entry.getName().str() +
             "' must be a non-empty string";
    entries.emplace_back(entry.getName().str(), className.str());
  }
  return "";
}

SmallVector<std::string> ModuleClasses::getClassNames() const {
  std::set<std::string> names;
  for (const auto &entry : entries)
    names.insert(entry.second);
  return SmallVector<std::string>(names.begin(), names.end());
}

bool ModuleClasses::hasClass(StringRef className) const {
  return llvm::any_of(entries,
                      [&](const auto &e) { return e.second == className; });
}

/// `path` with each decimal component replaced by `<i>`.
static std::string generalise(StringRef path) {
  SmallVector<StringRef> parts;
  path.split(parts, '.');
  SmallVector<std::string> out;
  for (StringRef part : parts) {
    unsigned index;
    out.push_back(!part.empty() && !part.getAsInteger(10, index)
                      ? std::string("<i>")
                      : part.str());
  }
  return llvm::join(out, ".");
}

SmallVector<std::string>
ModuleClasses::getPatterns(ArrayRef<std::string> classNames) const {
  auto wanted = [&](StringRef className) {
    return llvm::is_contained(classNames, className);
  };
  // Generalised pattern -> the exact paths of the wanted classes under it.
  llvm::MapVector<std::string, SmallVector<std::string>,
                  std::map<std::string, unsigned>>
      groups;
  for (const auto &[path, className] : entries)
    if (wanted(className))
      groups[generalise(path)].push_back(path);
  SmallVector<std::string> patterns;
  for (auto &[pattern, paths] : groups) {
    SmallVector<StringRef> parts;
    StringRef(pattern).split(parts, '.');
    // The pattern may stand for its paths only if it matches no module of
    // another class (a hybrid stack with two layer classes at layers.<i>).
    bool exact = llvm::any_of(entries, [&](const auto &entry) {
      std::optional<std::string> match =
          matchPathPattern(entry.first, parts, /*proper=*/false);
      return match && *match == entry.first && !wanted(entry.second);
    });
    if (exact)
      llvm::append_range(patterns, paths);
    else
      patterns.push_back(pattern);
  }
  llvm::stable_sort(patterns, [](const std::string &a, const std::string &b) {
    return llvm::count(a, '.') > llvm::count(b, '.');
  });
  return patterns;
}
