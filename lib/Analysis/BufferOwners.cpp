//===- BufferOwners.cpp - the unit each buffer belongs to -----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/BufferOwners.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// Whether the module at `path` ("" for the model) contains `name`.
bool contains(StringRef path, StringRef name) {
  return path.empty() || (name.size() > path.size() && name.starts_with(path) &&
                          name[path.size()] == '.');
}

/// The number of components of a module path ("" has none).
size_t depth(StringRef path) { return path.empty() ? 0 : path.count('.') + 1; }

} // namespace

BufferOwners::BufferOwners(ModuleOp module, const StepContract &contract)
    : module(module), contract(contract) {}

std::string BufferOwners::getUnitModule(UnitOp unit) {
  auto members = unit.getMembers().getAsRange<MemberAttr>();
  StringRef name = unit.getSymName();
  if (llvm::all_of(members,
                   [&](MemberAttr m) { return contains(name, m.getName()); }))
    return name.str();
  // The longest module path every member lies in: the common leading
  // components of the members' modules (a member's name less its last
  // component).
  SmallVector<StringRef> common;
  bool first = true;
  for (MemberAttr member : members) {
    SmallVector<StringRef> parts;
    member.getName().split(parts, '.');
    parts.pop_back();
    if (first) {
      common = parts;
      first = false;
      continue;
    }
    size_t same = 0;
    while (same < common.size() && same < parts.size() &&
           common[same] == parts[same])
      ++same;
    common.resize(same);
  }
  return llvm::join(common, ".");
}

void BufferOwners::run() {
  owners.clear();
  SmallVector<std::pair<UnitOp, std::string>> units;
  for (UnitOp unit : module.getOps<UnitOp>())
    units.push_back({unit, getUnitModule(unit)});
  if (units.empty())
    return;
  for (const StepArgument *buffer : contract.getArguments(ArgRole::Buffer)) {
    UnitOp inner, outer;
    size_t innerDepth = 0, outerDepth = 0;
    for (auto &[unit, path] : units) {
      size_t d = depth(path);
      if (contains(path, buffer->name) && (!inner || d > innerDepth)) {
        inner = unit;
        innerDepth = d;
      }
      if (!outer || d < outerDepth) {
        outer = unit;
        outerDepth = d;
      }
    }
    owners[buffer->index] = inner ? inner : outer;
  }
}
