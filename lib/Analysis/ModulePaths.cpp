//===- ModulePaths.cpp - the module paths of a step -----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/StepContract.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::zshard;

std::optional<StringRef> mlir::zshard::getModulePath(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  return std::nullopt;
}

bool mlir::zshard::needsModulePath(Operation *op) {
  return !op->hasTrait<OpTrait::IsTerminator>() &&
         !op->hasTrait<OpTrait::ConstantLike>();
}

MissingModulePaths mlir::zshard::findMissingModulePaths(func::FuncOp step) {
  MissingModulePaths missing;
  if (step.isExternal())
    return missing;
  for (Block &block : step.getBody())
    for (Operation &op : block) {
      if (!needsModulePath(&op) || getModulePath(op.getLoc()))
        continue;
      if (!missing.first)
        missing.first = &op;
      ++missing.count;
    }
  return missing;
}

LogicalResult mlir::zshard::verifyModulePaths(func::FuncOp step,
                                              StringRef who) {
  MissingModulePaths missing = findMissingModulePaths(step);
  if (!missing.first)
    return success();
  InFlightDiagnostic diag = emitError(missing.first->getLoc());
  if (!who.empty())
    diag << who << ": ";
  diag << "op '" << missing.first->getName() << "' has no module path";
  if (missing.count > 1)
    diag << " (nor do " << (missing.count - 1) << " more ops)";
  diag << "; module paths are name locations such as loc(\"h.0.attn\"), "
          "which MLIR prints only with debug info: print the step with "
          "zshard-opt (it keeps them by default) or with "
          "--mlir-print-debuginfo";
  return failure();
}

SmallVector<std::string>
mlir::zshard::findBlockPatterns(ArrayRef<StringRef> paths) {
  // Pattern -> nesting depth, in order of first appearance.
  llvm::MapVector<std::string, unsigned, std::map<std::string, unsigned>>
      depthOf;
  for (StringRef path : paths) {
    SmallVector<StringRef> parts;
    path.split(parts, '.');
    std::string pattern;
    unsigned depth = 0;
    for (StringRef part : parts) {
      bool index = !part.empty() && llvm::all_of(part, llvm::isDigit);
      if (!pattern.empty())
        pattern += '.';
      pattern += index ? StringRef("<i>") : part;
      if (index)
        depthOf.insert({pattern, depth++});
    }
  }
  SmallVector<std::pair<std::string, unsigned>> found(depthOf.begin(),
                                                      depthOf.end());
  llvm::stable_sort(
      found, [](const auto &a, const auto &b) { return a.second < b.second; });
  SmallVector<std::string> patterns;
  for (auto &[pattern, depth] : found)
    patterns.push_back(pattern);
  return patterns;
}

SmallVector<std::string> mlir::zshard::findBlockPatterns(func::FuncOp step) {
  SmallVector<StringRef> paths;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
    if (auto name = step.getArgAttrOfType<StringAttr>(i, contract::kName))
      if (name.getValue().contains('.'))
        paths.push_back(name.getValue().rsplit('.').first);
  if (!step.isExternal())
    for (Block &block : step.getBody())
      for (Operation &op : block)
        if (std::optional<StringRef> path = getModulePath(op.getLoc()))
          paths.push_back(*path);
  return findBlockPatterns(paths);
}

std::string mlir::zshard::describeBlockPatterns(func::FuncOp step) {
  SmallVector<std::string> patterns = findBlockPatterns(step);
  if (patterns.empty())
    return "the step has no repeated blocks (no module path with an index)";
  return "the step's repeated blocks are " + llvm::join(patterns, ", ");
}

Location mlir::zshard::getRootPathLoc(func::FuncOp step) {
  MLIRContext *ctx = step.getContext();
  Location child = UnknownLoc::get(ctx);
  if (auto file = step.getLoc()->findInstanceOf<FileLineColLoc>())
    child = file;
  return NameLoc::get(StringAttr::get(ctx, ""), child);
}

Location mlir::zshard::getReportLoc(Operation *op) {
  Location loc = op->getLoc();
  // A file location prints as `file:line:col`, a module path as
  // `loc("h.0.attn")`, which says where too.
  if (loc->findInstanceOf<FileLineColLoc>())
    return loc;
  std::optional<StringRef> path = getModulePath(loc);
  if (path && !path->empty())
    return loc;
  // The root path or no location: report where the enclosing op is.
  if (Operation *parent = op->getParentOp())
    return getReportLoc(parent);
  return UnknownLoc::get(op->getContext());
}

static bool isIndex(StringRef part) {
  return !part.empty() && llvm::all_of(part, llvm::isDigit);
}

std::optional<std::string>
mlir::zshard::matchPathPattern(StringRef path, ArrayRef<StringRef> pattern,
                               bool proper) {
  SmallVector<StringRef> parts;
  path.split(parts, '.');
  if (parts.size() < pattern.size() + (proper ? 1 : 0))
    return std::nullopt;
  for (auto [want, part] : llvm::zip(pattern, parts))
    if (want == "<i>" ? !isIndex(part) : want != part)
      return std::nullopt;
  return llvm::join(ArrayRef<StringRef>(parts).take_front(pattern.size()), ".");
}

bool mlir::zshard::isPathComponent(StringRef part) {
  if (isIndex(part))
    return true;
  return !part.empty() && (llvm::isAlpha(part.front()) || part.front() == '_') &&
         llvm::all_of(part, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

std::optional<SmallVector<StringRef>>
mlir::zshard::parsePathPattern(StringRef text) {
  SmallVector<StringRef> parts;
  text.trim().split(parts, '.');
  if (!llvm::all_of(parts, [](StringRef part) {
        return part == "<i>" || isPathComponent(part);
      }))
    return std::nullopt;
  return parts;
}

bool mlir::zshard::matchesParameter(StringRef pattern, StringRef name) {
  std::optional<SmallVector<StringRef>> want = parsePathPattern(pattern);
  return want && matchPathPattern(name, *want, /*proper=*/true).has_value();
}

SmallVector<std::string>
mlir::zshard::findParameterBlocks(ArrayRef<std::string> names) {
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
