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

StringRef mlir::zshard::getModulePath(Operation *op) {
  if (auto path = op->getAttrOfType<StringAttr>(contract::kPath))
    return path.getValue();
  return "";
}

void mlir::zshard::setModulePath(Operation *op, StringRef path) {
  if (path.empty()) {
    op->removeAttr(contract::kPath);
    return;
  }
  op->setAttr(contract::kPath, StringAttr::get(op->getContext(), path));
}

std::optional<StringRef> mlir::zshard::getLocationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  return std::nullopt;
}

void ModulePathStamper::notifyOperationInserted(Operation *op,
                                                OpBuilder::InsertPoint) {
  if (isa_and_nonnull<func::FuncOp>(op->getParentOp()) && needsModulePath(op))
    setModulePath(op, path);
}

bool mlir::zshard::hasLocationPaths(func::FuncOp step) {
  if (step.isExternal())
    return false;
  bool found = false;
  for (Operation &op : step.front()) {
    if (op.hasAttr(contract::kPath))
      return false;
    std::optional<StringRef> name = getLocationName(op.getLoc());
    if (needsModulePath(&op) && name && !name->empty() &&
        isValidDottedPath(*name))
      found = true;
  }
  return found;
}

bool mlir::zshard::needsModulePath(Operation *op) {
  return !op->hasTrait<OpTrait::IsTerminator>() &&
         !op->hasTrait<OpTrait::ConstantLike>();
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
        if (StringRef path = getModulePath(&op); !path.empty())
          paths.push_back(path);
  return findBlockPatterns(paths);
}

std::string mlir::zshard::describeBlockPatterns(func::FuncOp step) {
  if (hasLocationPaths(step))
    return "the step's ops carry their module paths as name locations "
           "(loc(\"h.0.attn\")), not as zshard.path attributes: run "
           "--zshard-paths-from-locations first";
  SmallVector<std::string> patterns = findBlockPatterns(step);
  if (patterns.empty())
    return "the step has no repeated blocks (no module path with an index)";
  return "the step's repeated blocks are " + llvm::join(patterns, ", ");
}

Location mlir::zshard::getStepLoc(func::FuncOp step) {
  if (auto file = step.getLoc()->findInstanceOf<FileLineColLoc>())
    return file;
  return UnknownLoc::get(step.getContext());
}

Location mlir::zshard::getReportLoc(Operation *op) {
  Location loc = op->getLoc();
  // A file location prints as `file:line:col`, a name as `h.0.attn`: each
  // says where.
  if (loc->findInstanceOf<FileLineColLoc>())
    return loc;
  std::optional<StringRef> name = getLocationName(loc);
  if (name && !name->empty())
    return loc;
  if (StringRef path = getModulePath(op); !path.empty())
    return NameLoc::get(StringAttr::get(op->getContext(), path), loc);
  // The root module or no location: report where the enclosing op is.
  if (Operation *parent = op->getParentOp())
    return getReportLoc(parent);
  return UnknownLoc::get(op->getContext());
}

SmallVector<std::string>
mlir::zshard::findParameterBlocks(ArrayRef<std::string> names) {
  llvm::MapVector<std::string, int64_t, std::map<std::string, unsigned>> counts;
  for (StringRef name : names) {
    SmallVector<StringRef> parts;
    name.split(parts, '.');
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (!isPathIndex(parts[i]))
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
