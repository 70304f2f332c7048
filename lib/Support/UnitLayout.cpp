//===- UnitLayout.cpp - flat-buffer layout of a unit ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Support/UnitLayout.h"

#include <algorithm>
#include <set>

using namespace zshard;

std::optional<int64_t>
zshard::checkedNumElements(const std::vector<int64_t> &shape) {
  int64_t product = 1;
  for (int64_t extent : shape) {
    if (extent < 0 || __builtin_mul_overflow(product, extent, &product))
      return std::nullopt;
  }
  return product;
}

std::optional<int64_t> zshard::roundUpToMultiple(int64_t value,
                                                 int64_t multiple) {
  if (value < 0 || multiple <= 0)
    return std::nullopt;
  int64_t remainder = value % multiple;
  if (remainder == 0)
    return value;
  int64_t result;
  if (__builtin_add_overflow(value, multiple - remainder, &result))
    return std::nullopt;
  return result;
}

static std::nullopt_t fail(std::string *error, const std::string &message) {
  if (error)
    *error = message;
  return std::nullopt;
}

std::optional<UnitLayout>
UnitLayout::create(const std::vector<MemberSpec> &specs, int64_t groupSize,
                   int64_t alignment, std::string *error) {
  if (specs.empty())
    return fail(error, "a unit needs at least one member");
  if (groupSize <= 0)
    return fail(error, "group size must be positive, got " +
                           std::to_string(groupSize));
  if (alignment <= 0)
    return fail(error,
                "alignment must be positive, got " + std::to_string(alignment));

  UnitLayout layout;
  layout.groupSize = groupSize;
  std::set<std::string> seen;
  int64_t cursor = 0;
  for (const MemberSpec &spec : specs) {
    if (!seen.insert(spec.name).second)
      return fail(error, "member '" + spec.name + "' appears twice");
    std::optional<int64_t> numElements = checkedNumElements(spec.shape);
    if (!numElements)
      return fail(error, "member '" + spec.name +
                             "' has a negative extent or too many elements");
    std::optional<int64_t> offset = roundUpToMultiple(cursor, alignment);
    if (!offset || __builtin_add_overflow(*offset, *numElements, &cursor))
      return fail(error, "unit is too large to lay out");
    layout.members.push_back({spec.name, spec.shape, *offset, *numElements});
  }
  layout.extent = cursor;
  std::optional<int64_t> padded = roundUpToMultiple(cursor, groupSize);
  if (!padded)
    return fail(error, "unit is too large to pad");
  layout.paddedSize = *padded;
  return layout;
}

int64_t UnitLayout::getPaddingElements() const {
  int64_t used = 0;
  for (const MemberLayout &member : members)
    used += member.numElements;
  return paddedSize - used;
}

FlatRange UnitLayout::getShardRange(int64_t rank) const {
  int64_t shard = getShardSize();
  return {rank * shard, (rank + 1) * shard};
}

std::vector<MemberSlice> UnitLayout::getShardSlices(int64_t rank) const {
  FlatRange range = getShardRange(rank);
  std::vector<MemberSlice> slices;
  for (size_t i = 0, e = members.size(); i < e; ++i) {
    const MemberLayout &member = members[i];
    int64_t begin = std::max(range.begin, member.offset);
    int64_t end = std::min(range.end, member.offset + member.numElements);
    if (begin >= end)
      continue;
    slices.push_back(
        {i, {begin - member.offset, end - member.offset}, begin - range.begin});
  }
  return slices;
}
