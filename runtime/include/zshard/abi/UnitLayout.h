//===- UnitLayout.h - flat-buffer layout of a unit --------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The layout arithmetic of a unit (FSDP's FlatParameter): where each member
/// starts in the flat buffer, how far the buffer is padded so that every rank
/// of a group holds an equal shard, and which piece of which member each rank
/// holds. The compiler lays units out with it and
/// the runtime cuts shards into members with it, so both compute the same
/// numbers.
///
/// Header-only C++17 with no LLVM or MLIR dependency.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ABI_UNITLAYOUT_H
#define ZSHARD_ABI_UNITLAYOUT_H

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace zshard_abi {

/// Number of elements of `shape`, or std::nullopt when an extent is negative
/// or the product overflows int64_t. The empty shape (a scalar) has one.
inline std::optional<int64_t>
checkedNumElements(const std::vector<int64_t> &shape);

/// `value` rounded up to a multiple of `multiple` (> 0), or std::nullopt on a
/// negative value, a non-positive multiple or overflow.
inline std::optional<int64_t> roundUpToMultiple(int64_t value,
                                                int64_t multiple);

/// A half-open element range [begin, end) of a flat buffer.
struct FlatRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const FlatRange &other) const {
    return begin == other.begin && end == other.end;
  }
};

/// The part of one member that lies in one rank's shard.
struct MemberSlice {
  /// Index of the member in the unit.
  size_t member = 0;
  /// Elements [begin, end) of the member, in its row-major flattening.
  FlatRange memberRange;
  /// Where that piece starts inside the rank's shard.
  int64_t shardOffset = 0;
};

/// The part of a member at flat elements [offset, offset + numElements)
/// that lies in the shard \p shard (a flat range): the member's elements
/// [begin, end) in memberRange and where they start in the shard, or an
/// empty memberRange when the shard holds none of it. UnitLayout's slices
/// and the runtime's shard pieces are both this.
inline MemberSlice sliceOfShard(int64_t offset, int64_t numElements,
                                FlatRange shard) {
  int64_t begin = std::max(shard.begin, offset);
  int64_t end = std::min(shard.end, offset + numElements);
  if (begin >= end)
    return {};
  return {0, {begin - offset, end - offset}, begin - shard.begin};
}

/// A parameter to be placed in a unit.
struct MemberSpec {
  std::string name;
  std::vector<int64_t> shape;
};

/// A placed member.
struct MemberLayout {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset = 0;
  int64_t numElements = 0;
};

/// The layout of one unit over a group of `groupSize` ranks.
class UnitLayout {
public:
  /// Places `members` in order, each at the next multiple of `alignment`
  /// elements, and pads the extent up to a multiple of `groupSize`. Fails
  /// with a message in `error` on an empty member list, duplicate names,
  /// negative extents, a non-positive group size or alignment, or overflow.
  static std::optional<UnitLayout>
  create(const std::vector<MemberSpec> &members, int64_t groupSize,
         int64_t alignment = 1, std::string *error = nullptr);

  const std::vector<MemberLayout> &getMembers() const { return members; }
  int64_t getGroupSize() const { return groupSize; }
  /// One past the last element any member occupies.
  int64_t getExtent() const { return extent; }
  /// Flat buffer size: the extent rounded up to a multiple of the group size.
  int64_t getPaddedSize() const { return paddedSize; }
  /// Elements each rank holds.
  int64_t getShardSize() const { return paddedSize / groupSize; }
  /// Elements of the flat buffer that belong to no member.
  int64_t getPaddingElements() const;

  /// The flat range rank `rank` (0 <= rank < group size) holds.
  FlatRange getShardRange(int64_t rank) const;
  /// The pieces of members inside rank `rank`'s shard, in flat order. Padding
  /// and alignment gaps belong to no member and are not listed.
  std::vector<MemberSlice> getShardSlices(int64_t rank) const;

private:
  UnitLayout() = default;
  std::vector<MemberLayout> members;
  int64_t groupSize = 1;
  int64_t extent = 0;
  int64_t paddedSize = 0;
};

inline std::optional<int64_t>
checkedNumElements(const std::vector<int64_t> &shape) {
  int64_t product = 1;
  for (int64_t extent : shape) {
    if (extent < 0 || __builtin_mul_overflow(product, extent, &product))
      return std::nullopt;
  }
  return product;
}

inline std::optional<int64_t> roundUpToMultiple(int64_t value,
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

namespace detail {
inline std::nullopt_t failLayout(std::string *error,
                                 const std::string &message) {
  if (error)
    *error = message;
  return std::nullopt;
}
} // namespace detail

inline std::optional<UnitLayout>
UnitLayout::create(const std::vector<MemberSpec> &specs, int64_t groupSize,
                   int64_t alignment, std::string *error) {
  if (specs.empty())
    return detail::failLayout(error, "a unit needs at least one member");
  if (groupSize <= 0)
    return detail::failLayout(error, "group size must be positive, got " +
                                         std::to_string(groupSize));
  if (alignment <= 0)
    return detail::failLayout(error, "alignment must be positive, got " +
                                         std::to_string(alignment));

  UnitLayout layout;
  layout.groupSize = groupSize;
  std::set<std::string> seen;
  int64_t cursor = 0;
  for (const MemberSpec &spec : specs) {
    if (!seen.insert(spec.name).second)
      return detail::failLayout(error,
                                "member '" + spec.name + "' appears twice");
    std::optional<int64_t> numElements = checkedNumElements(spec.shape);
    if (!numElements)
      return detail::failLayout(
          error, "member '" + spec.name +
                     "' has a negative extent or too many elements");
    std::optional<int64_t> offset = roundUpToMultiple(cursor, alignment);
    if (!offset || __builtin_add_overflow(*offset, *numElements, &cursor))
      return detail::failLayout(error, "unit is too large to lay out");
    layout.members.push_back({spec.name, spec.shape, *offset, *numElements});
  }
  layout.extent = cursor;
  std::optional<int64_t> padded = roundUpToMultiple(cursor, groupSize);
  if (!padded)
    return detail::failLayout(error, "unit is too large to pad");
  layout.paddedSize = *padded;
  return layout;
}

inline int64_t UnitLayout::getPaddingElements() const {
  int64_t used = 0;
  for (const MemberLayout &member : members)
    used += member.numElements;
  return paddedSize - used;
}

inline FlatRange UnitLayout::getShardRange(int64_t rank) const {
  int64_t shard = getShardSize();
  return {rank * shard, (rank + 1) * shard};
}

inline std::vector<MemberSlice> UnitLayout::getShardSlices(int64_t rank) const {
  FlatRange range = getShardRange(rank);
  std::vector<MemberSlice> slices;
  for (size_t i = 0, e = members.size(); i < e; ++i) {
    MemberSlice slice =
        sliceOfShard(members[i].offset, members[i].numElements, range);
    if (slice.memberRange.size() == 0)
      continue;
    slice.member = i;
    slices.push_back(slice);
  }
  return slices;
}

} // namespace zshard_abi

#endif // ZSHARD_ABI_UNITLAYOUT_H
