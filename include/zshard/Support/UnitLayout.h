//===- UnitLayout.h - flat-buffer layout of a unit --------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The layout arithmetic of a unit (FSDP's FlatParameter): where each member
/// starts in the flat buffer, how far the buffer is padded so that every rank
/// of a group holds an equal shard, and which piece of which member each rank
/// holds. Pure C++ with no LLVM or MLIR dependency, so the compiler's
/// verifiers and the runtime's checkpoint code compute the same numbers.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_SUPPORT_UNITLAYOUT_H
#define ZSHARD_SUPPORT_UNITLAYOUT_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zshard {

/// Number of elements of `shape`, or std::nullopt when an extent is negative
/// or the product overflows int64_t. The empty shape (a scalar) has one.
std::optional<int64_t> checkedNumElements(const std::vector<int64_t> &shape);

/// `value` rounded up to a multiple of `multiple` (> 0), or std::nullopt on a
/// negative value, a non-positive multiple or overflow.
std::optional<int64_t> roundUpToMultiple(int64_t value, int64_t multiple);

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

} // namespace zshard

#endif // ZSHARD_SUPPORT_UNITLAYOUT_H
