//===- ShardOptimizer.cpp - the optimizer on a unit's shards --------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "ShardOptimizer.h"

#include "FlatBuffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::zshard;

UnitShards zshard::shardOptimizer(OpBuilder &builder,
                                  const StepContract &contract, Block &block,
                                  const UnitPlan &plan, Value rankCoord,
                                  const UnitShards &shards, Value gradShard,
                                  SmallVectorImpl<PartialSum> &partialSums,
                                  llvm::BitVector &deadArgs,
                                  llvm::BitVector &deadResults) {
  UnitOp unit = plan.unit;
  Location loc = unitLoc(unit);
  MLIRContext *ctx = builder.getContext();
  Builder b(ctx);
  int64_t S = plan.shardSize;
  auto shardType = [&](Type element) {
    return RankedTensorType::get({S}, element);
  };
  bool paramsSharded = unit.getStrategy() != Strategy::Zero1;
  Value paramShard = shards.param;
  ArrayRef<Value> stateShards = shards.states;

  // The optimizer, on this rank's part of each member, after the last of the
  // old updates (whose scalar operands are all defined there).
  Operation *lastUpdate = nullptr;
  for (const Member &m : plan.members)
    if (!lastUpdate || lastUpdate->isBeforeInBlock(m.update->op))
      lastUpdate = m.update->op;
  builder.setInsertionPointAfter(lastUpdate);
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(builder, loc, v).getResult();
  };
  Value begin = arith::MulIOp::create(builder, loc, rankCoord, index(S));
  Value end = arith::AddIOp::create(builder, loc, begin, index(S));
  if (!paramsSharded) {
    // zero1: this rank's part of the whole parameters, packed flat.
    SmallVector<Value> params;
    for (const Member &m : plan.members)
      params.push_back(block.getArgument(m.argIndex));
    Value flat = packMembers(builder, loc, unit.getPaddedSize(), plan.layouts(),
                             params, unit.getParamType());
    paramShard = tensor::ExtractSliceOp::create(
        builder, loc, shardType(unit.getParamType()), flat, ValueRange{begin},
        ValueRange{}, ValueRange{},
        b.getDenseI64ArrayAttr({ShapedType::kDynamic}),
        b.getDenseI64ArrayAttr({S}), b.getDenseI64ArrayAttr({1}));
  }
  Value paramOut = paramShard;
  SmallVector<Value> stateOuts(stateShards);
  for (const Member &m : plan.members) {
    int64_t offset = m.layout.getOffset(), n = m.layout.getNumElements();
    // This rank holds [lo, hi) of the member: at `at` in its shard, `len` long.
    Value lo = arith::MaxSIOp::create(builder, loc, begin, index(offset));
    Value hi = arith::MinSIOp::create(builder, loc, end, index(offset + n));
    Value len = arith::MaxSIOp::create(
        builder, loc, arith::SubIOp::create(builder, loc, hi, lo), index(0));
    Value at = arith::MinSIOp::create(
        builder, loc,
        arith::MaxSIOp::create(builder, loc,
                               arith::SubIOp::create(builder, loc, lo, begin),
                               index(0)),
        index(S));
    auto piece = [&](Value shard) -> Value {
      auto type = cast<RankedTensorType>(shard.getType());
      return tensor::ExtractSliceOp::create(
          builder, loc,
          RankedTensorType::get({ShapedType::kDynamic}, type.getElementType()),
          shard, ValueRange{at}, ValueRange{len}, ValueRange{},
          b.getDenseI64ArrayAttr({ShapedType::kDynamic}),
          b.getDenseI64ArrayAttr({ShapedType::kDynamic}),
          b.getDenseI64ArrayAttr({1}));
    };
    AdamWOp old = m.update->op;
    const StepArgument &param = contract.getArguments()[m.argIndex];
    // The gradient is reduced in the unit's reduce type, used in its own.
    Type gradElement =
        cast<RankedTensorType>(old.getGrad().getType()).getElementType();
    Value gradPiece =
        convertElements(builder, loc, piece(gradShard), gradElement);
    for (linalg::GenericOp sum : m.sums)
      partialSums.push_back(
          {sum, rebuildSum(builder, sum, gradPiece).getResult(0), unit});
    // This rank's piece of the state argument `state`, from its slot's shard.
    auto statePiece = [&](Value state) -> Value {
      if (!state)
        return state;
      const StepArgument &info =
          contract.getArguments()[cast<BlockArgument>(state).getArgNumber()];
      StringRef slot = StringRef(info.name).drop_front(param.name.size() + 1);
      auto it = llvm::find_if(plan.slots,
                              [&](const auto &s) { return s.first == slot; });
      return piece(stateShards[it - plan.slots.begin()]);
    };
    Value paramPiece = piece(paramShard);
    Value expAvg = statePiece(old.getExpAvg());
    Value expAvgSq = statePiece(old.getExpAvgSq());
    Value master = statePiece(old.getMaster());
    auto updated = AdamWOp::create(
        builder, old.getLoc(), old.getOrderAttr(), paramPiece, gradPiece,
        expAvg, expAvgSq, master, old.getLr(), old.getStep(),
        old.getGradScale(), old.getBeta1Attr(), old.getBeta2Attr(),
        old.getEpsAttr(), old.getWeightDecayAttr());

    // Each result lands in the shard it updates.
    for (auto [result, stepIndex] :
         llvm::zip(updated->getResults(), m.update->resultIndices)) {
      const StepResult &info = contract.getResults()[stepIndex];
      Value *target = &paramOut;
      if (info.role == ResultRole::OptStateOut) {
        StringRef slot = StringRef(info.name).drop_front(param.name.size() + 1);
        auto it = llvm::find_if(plan.slots,
                                [&](const auto &s) { return s.first == slot; });
        target = &stateOuts[it - plan.slots.begin()];
      }
      *target = tensor::InsertSliceOp::create(
          builder, loc, result, *target, ValueRange{at}, ValueRange{len},
          ValueRange{}, b.getDenseI64ArrayAttr({ShapedType::kDynamic}),
          b.getDenseI64ArrayAttr({ShapedType::kDynamic}),
          b.getDenseI64ArrayAttr({1}));
      deadResults.set(stepIndex);
    }
    if (paramsSharded)
      deadArgs.set(m.argIndex);
    for (const StepArgument *state : contract.getArguments(ArgRole::OptState))
      if (state->param == param.name)
        deadArgs.set(state->index);
  }
  return {paramOut, stateOuts};
}
