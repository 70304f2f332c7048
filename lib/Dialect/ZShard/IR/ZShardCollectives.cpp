//===- ZShardCollectives.cpp - zshard collective ops ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// CollectiveOpInterface for the six collective ops, and the verifier rules
/// they share: group axes, element types, shapes against the group size, the
/// unit a collective moves, token use, and gathers without a release.
///
//===----------------------------------------------------------------------===//

#include "ZShardVerifyUtils.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

using namespace mlir;
using namespace mlir::zshard;

namespace mlir::zshard {
CollectiveOpInterface getReleasedGather(ReleaseOp release);
} // namespace mlir::zshard

//===----------------------------------------------------------------------===//
// Interface methods
//===----------------------------------------------------------------------===//

static RankedTensorType payloadOf(Value token) {
  return cast<TokenType>(token.getType()).getResult();
}

#define ZSHARD_SYNC_COLLECTIVE(Op, Kind, Reduce)                               \
  RankedTensorType Op::getResultTensorType() { return getResult().getType(); } \
  CollectiveKind Op::getCollectiveKind() { return CollectiveKind::Kind; }      \
  std::optional<ReduceKind> Op::getReduceKindIfAny() { return Reduce; }        \
  bool Op::isAsync() { return false; }

#define ZSHARD_ASYNC_COLLECTIVE(Op, Kind, Reduce)                              \
  RankedTensorType Op::getResultTensorType() { return payloadOf(getToken()); } \
  CollectiveKind Op::getCollectiveKind() { return CollectiveKind::Kind; }      \
  std::optional<ReduceKind> Op::getReduceKindIfAny() { return Reduce; }        \
  bool Op::isAsync() { return true; }

ZSHARD_SYNC_COLLECTIVE(AllGatherOp, AllGather, std::nullopt)
ZSHARD_SYNC_COLLECTIVE(ReduceScatterOp, ReduceScatter, getReduce())
ZSHARD_SYNC_COLLECTIVE(AllReduceOp, AllReduce, getReduce())
ZSHARD_ASYNC_COLLECTIVE(AllGatherStartOp, AllGather, std::nullopt)
ZSHARD_ASYNC_COLLECTIVE(ReduceScatterStartOp, ReduceScatter, getReduce())
ZSHARD_ASYNC_COLLECTIVE(AllReduceStartOp, AllReduce, getReduce())

#undef ZSHARD_SYNC_COLLECTIVE
#undef ZSHARD_ASYNC_COLLECTIVE

//===----------------------------------------------------------------------===//
// Structural rules (no symbol lookups)
//===----------------------------------------------------------------------===//

/// A unit may not be gathered again before its previous gather is released:
/// walk back through the block to the previous gather or release of `unit`.
static LogicalResult verifyNoGatherWithoutRelease(CollectiveOpInterface op,
                                                  FlatSymbolRefAttr unit) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto release = dyn_cast<ReleaseOp>(prev)) {
      CollectiveOpInterface gather = getReleasedGather(release);
      if (gather && gather.getUnitAttr() == unit)
        return success();
      continue;
    }
    auto other = dyn_cast<CollectiveOpInterface>(prev);
    if (!other || other.getCollectiveKind() != CollectiveKind::AllGather ||
        other.getUnitAttr() != unit)
      continue;
    InFlightDiagnostic diag =
        op->emitOpError() << "gathers unit " << unit
                          << " again before its previous gather is released";
    diag.attachNote(prev->getLoc()) << "previous gather here";
    return diag;
  }
  return success();
}

LogicalResult zshard::detail::verifyCollectiveOp(Operation *rawOp) {
  auto op = cast<CollectiveOpInterface>(rawOp);
  if (failed(verifyAxisList(op, op.getGridAxes(), "grid axis")))
    return failure();

  auto input = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType result = op.getResultTensorType();
  if (input.getElementType() != result.getElementType())
    return op->emitOpError()
           << "element type of the result (" << result.getElementType()
           << ") differs from the input (" << input.getElementType()
           << "); convert explicitly before or after the collective";
  if (input.getRank() != result.getRank())
    return op->emitOpError()
           << "result rank " << result.getRank()
           << " differs from the input rank " << input.getRank();

  CollectiveKind kind = op.getCollectiveKind();
  if (kind == CollectiveKind::AllReduce) {
    if (input != result)
      return op->emitOpError() << "result type " << result
                               << " differs from the input type " << input;
  } else {
    if (input.getRank() == 0)
      return op->emitOpError()
             << "needs a tensor of rank at least 1 to "
             << (kind == CollectiveKind::AllGather ? "gather" : "scatter")
             << " along dimension 0";
    if (input.getShape().drop_front() != result.getShape().drop_front())
      return op->emitOpError()
             << "input and result may differ only in dimension 0";
  }
  if (kind != CollectiveKind::AllGather && !op.getReduceKindIfAny().has_value())
    return op->emitOpError() << "needs a reduction";

  if (op.isAsync()) {
    Value token = op->getResult(0);
    size_t uses = std::distance(token.use_begin(), token.use_end());
    if (uses != 1 || !isa<WaitOp>(*token.user_begin()))
      return op->emitOpError()
             << "token must be consumed by exactly one zshard.wait (found "
             << uses << " use" << (uses == 1 ? "" : "s") << ")";
  }

  if (kind == CollectiveKind::AllGather && op.getUnitAttr())
    return verifyNoGatherWithoutRelease(op, op.getUnitAttr());
  return success();
}

//===----------------------------------------------------------------------===//
// Rules that need the grid and the unit
//===----------------------------------------------------------------------===//

/// Checks `op` against the unit it names.
static LogicalResult verifyAgainstUnit(CollectiveOpInterface op, UnitOp unit,
                                       std::optional<int64_t> group) {
  FlatSymbolRefAttr unitName = op.getUnitAttr();
  if (unit.getGridAttr() != op.getGridAttr())
    return op->emitOpError()
           << "runs over grid " << op.getGridAttr() << " but unit " << unitName
           << " lives on grid " << unit.getGridAttr();

  auto input = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType result = op.getResultTensorType();
  CollectiveKind kind = op.getCollectiveKind();
  bool overShardAxes = op.getGridAxes() == unit.getShardAxes();
  bool overReplicaAxes =
      unit.isHybrid() && op.getGridAxes() == unit.getReplicateAxes();

  if (kind != CollectiveKind::AllReduce) {
    if (unit.getStrategy() == Strategy::NoShard)
      return op->emitOpError() << "unit " << unitName
                               << " is not sharded (no_shard); it is never "
                                  "gathered or reduce-scattered";
    if (!overShardAxes)
      return op->emitOpError()
             << "must run over the shard axes of unit " << unitName;
    RankedTensorType full = kind == CollectiveKind::AllGather ? result : input;
    Type expectedElement = kind == CollectiveKind::AllGather
                               ? unit.getParamType()
                               : unit.getReduceType();
    if (full.getRank() != 1 || full.getDimSize(0) != unit.getPaddedSize())
      return op->emitOpError()
             << "full buffer " << full << " must be 1-D of unit " << unitName
             << "'s padded size " << unit.getPaddedSize();
    if (full.getElementType() != expectedElement)
      return op->emitOpError()
             << "element type " << full.getElementType() << " must be unit "
             << unitName << "'s "
             << (kind == CollectiveKind::AllGather ? "parameter" : "reduce")
             << " type " << expectedElement;
    return success();
  }

  // all_reduce: full gradients over the shard axes (no_shard), or shards
  // over the replicate axes (hybrid).
  if (!overShardAxes && !overReplicaAxes)
    return op->emitOpError() << "must run over the shard or replicate axes of "
                                "unit "
                             << unitName;
  if (input.getElementType() != unit.getReduceType())
    return op->emitOpError()
           << "element type " << input.getElementType() << " must be unit "
           << unitName << "'s reduce type " << unit.getReduceType();
  if (input.getRank() != 1)
    return op->emitOpError() << "buffer of unit " << unitName << " must be 1-D";
  int64_t size = input.getDimSize(0);
  std::optional<int64_t> shard = unit.getShardSize();
  bool fits = ShapedType::isDynamic(size) || size == unit.getPaddedSize() ||
              (overReplicaAxes && (!shard || size == *shard));
  if (!fits)
    return op->emitOpError() << "buffer of " << size
                             << " elements is neither the padded size nor the "
                                "shard size of unit "
                             << unitName;
  return success();
}

static LogicalResult
verifyCollectiveSymbolUses(CollectiveOpInterface op,
                           SymbolTableCollection &symbols) {
  shard::GridOp grid =
      lookupGridAndCheckAxes(op, op.getGridAttr(), op.getGridAxes(), symbols);
  if (!grid)
    return failure();
  std::optional<int64_t> group = getGroupSize(grid, op.getGridAxes());

  auto input = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType result = op.getResultTensorType();
  CollectiveKind kind = op.getCollectiveKind();
  if (group && kind != CollectiveKind::AllReduce) {
    bool gather = kind == CollectiveKind::AllGather;
    int64_t shardDim = gather ? input.getDimSize(0) : result.getDimSize(0);
    int64_t fullDim = gather ? result.getDimSize(0) : input.getDimSize(0);
    if (!ShapedType::isDynamic(shardDim) && !ShapedType::isDynamic(fullDim) &&
        shardDim * *group != fullDim)
      return op->emitOpError()
             << "shard dimension 0 (" << shardDim << ") times the group size ("
             << *group << ") must equal the full dimension 0 (" << fullDim
             << ")";
  }

  FlatSymbolRefAttr unitName = op.getUnitAttr();
  if (!unitName)
    return success();
  auto unit = symbols.lookupNearestSymbolFrom<UnitOp>(op, unitName);
  if (!unit)
    return op->emitOpError()
           << "unit " << unitName << " does not name a zshard.unit";
  return verifyAgainstUnit(op, unit, group);
}

#define ZSHARD_SYMBOL_USES(Op)                                                 \
  LogicalResult Op::verifySymbolUses(SymbolTableCollection &symbols) {         \
    return verifyCollectiveSymbolUses(*this, symbols);                         \
  }
ZSHARD_SYMBOL_USES(AllGatherOp)
ZSHARD_SYMBOL_USES(ReduceScatterOp)
ZSHARD_SYMBOL_USES(AllReduceOp)
ZSHARD_SYMBOL_USES(AllGatherStartOp)
ZSHARD_SYMBOL_USES(ReduceScatterStartOp)
ZSHARD_SYMBOL_USES(AllReduceStartOp)
#undef ZSHARD_SYMBOL_USES
