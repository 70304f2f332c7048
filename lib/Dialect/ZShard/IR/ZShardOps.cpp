//===- ZShardOps.cpp - zshard units, waits and releases -------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The generated op definitions, and the verifiers of the ops that are not
/// collectives: units, waits and releases. Collectives live in
/// ZShardCollectives.cpp, canonicalization in ZShardCanonicalize.cpp.
///
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

#include "ZShardVerifyUtils.h"
#include "zshard/Dialect/ZShard/IR/ZShardPrinting.h"
#include "zshard/abi/UnitLayout.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::zshard;

#define GET_OP_CLASSES
#include "zshard/Dialect/ZShard/IR/ZShardOps.cpp.inc"

//===----------------------------------------------------------------------===//
// UnitOp
//===----------------------------------------------------------------------===//

int64_t UnitOp::getExtent() {
  int64_t extent = 0;
  for (auto member : getMembers().getAsRange<MemberAttr>())
    extent = std::max(extent, member.getOffset() + member.getNumElements());
  return extent;
}

bool UnitOp::isHybrid() {
  return getStrategy() == Strategy::HybridShard ||
         getStrategy() == Strategy::HybridShardZero2;
}

std::optional<int64_t> UnitOp::getShardSize() {
  std::optional<int64_t> group =
      getStaticGroupSize(*this, getGridAttr(), getShardAxes());
  if (!group || *group == 0)
    return std::nullopt;
  return getPaddedSize() / *group;
}

LogicalResult UnitOp::verify() {
  ArrayAttr members = getMembers();
  if (members.empty())
    return emitOpError() << "unit @" << getSymName() << " has no members";

  llvm::StringSet<> names;
  MemberAttr previous;
  for (auto member : members.getAsRange<MemberAttr>()) {
    if (!names.insert(member.getName()).second)
      return emitOpError() << "member '" << member.getName()
                           << "' appears twice";
    if (previous) {
      int64_t previousEnd = previous.getOffset() + previous.getNumElements();
      if (member.getOffset() < previousEnd)
        return emitOpError()
               << "member '" << member.getName() << "' at offset "
               << member.getOffset() << " overlaps or precedes member '"
               << previous.getName() << "', which ends at " << previousEnd;
    }
    previous = member;
  }

  if (std::optional<Type> buffer = getBufferType();
      buffer && !isa<Float32Type, BFloat16Type, Float16Type>(*buffer))
    return emitOpError() << "buffer type must be f32, bf16 or f16, got "
                         << *buffer;

  if (getPaddedSize() < getExtent())
    return emitOpError() << "padded size " << getPaddedSize()
                         << " is smaller than the members' extent "
                         << getExtent();

  if (failed(verifyAxisList(*this, getShardAxes(), "shard axis")) ||
      failed(verifyAxisList(*this, getReplicateAxes(), "replicate axis",
                            /*allowEmpty=*/true)))
    return failure();
  for (int64_t axis : getReplicateAxes())
    if (llvm::is_contained(getShardAxes(), axis))
      return emitOpError() << "grid axis " << axis
                           << " is both a shard and a replicate axis";

  if (isHybrid() && getReplicateAxes().empty())
    return emitOpError() << "strategy " << stringifyStrategy(getStrategy())
                         << " needs replicate axes";
  if (!isHybrid() && !getReplicateAxes().empty())
    return emitOpError() << "strategy " << stringifyStrategy(getStrategy())
                         << " takes no replicate axes; use a hybrid strategy";
  return success();
}

LogicalResult UnitOp::verifySymbolUses(SymbolTableCollection &symbols) {
  SmallVector<int64_t> allAxes(getShardAxes());
  llvm::append_range(allAxes, getReplicateAxes());
  shard::GridOp grid =
      lookupGridAndCheckAxes(*this, getGridAttr(), allAxes, symbols);
  if (!grid)
    return failure();
  std::optional<int64_t> group = getGroupSize(grid, getShardAxes());
  if (!group)
    return success();
  std::optional<int64_t> expected =
      ::zshard_abi::roundUpToMultiple(getExtent(), *group);
  if (!expected || *expected != getPaddedSize())
    return emitOpError() << "padded size " << getPaddedSize()
                         << " must be the members' extent " << getExtent()
                         << " rounded up to a multiple of the shard group size "
                         << *group << " (expected "
                         << (expected ? std::to_string(*expected) : "overflow")
                         << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// WaitOp
//===----------------------------------------------------------------------===//

CollectiveOpInterface WaitOp::getStart() {
  auto start = getToken().getDefiningOp<CollectiveOpInterface>();
  if (start && start.isAsync())
    return start;
  return nullptr;
}

LogicalResult WaitOp::verify() {
  if (!getStart())
    return emitOpError()
           << "token must come straight from a zshard collective start op";
  return success();
}

//===----------------------------------------------------------------------===//
// ReleaseOp
//===----------------------------------------------------------------------===//

/// The all_gather (sync or start) that produced `value`, or null.
static CollectiveOpInterface getGatherOf(Value value) {
  if (auto gather = value.getDefiningOp<AllGatherOp>())
    return cast<CollectiveOpInterface>(gather.getOperation());
  if (auto wait = value.getDefiningOp<WaitOp>()) {
    CollectiveOpInterface start = wait.getStart();
    if (start && start.getCollectiveKind() == CollectiveKind::AllGather)
      return start;
  }
  return nullptr;
}

namespace mlir::zshard {
/// Returns the gather that produced the buffer `release` frees, or null.
CollectiveOpInterface getReleasedGather(ReleaseOp release) {
  return getGatherOf(release.getBuffer());
}
} // namespace mlir::zshard

LogicalResult ReleaseOp::verify() {
  Value buffer = getBuffer();
  if (!getGatherOf(buffer))
    return emitOpError() << "operand must be a gathered buffer: the result of "
                            "zshard.all_gather or of zshard.wait on "
                            "zshard.all_gather_start";
  for (Operation *user : buffer.getUsers()) {
    if (user == getOperation())
      continue;
    if (isa<ReleaseOp>(user))
      return emitOpError() << "buffer is released more than once";
    if (user->getBlock() == (*this)->getBlock() &&
        (*this)->isBeforeInBlock(user)) {
      InFlightDiagnostic diag = emitOpError()
                                << "gathered buffer is used after its release";
      diag.attachNote(user->getLoc()) << "used here";
      return diag;
    }
  }
  return success();
}
