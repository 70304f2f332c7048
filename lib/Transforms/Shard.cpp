//===- Shard.cpp - --zshard-shard -----------------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Shards a training step by unit: gathers before use and releases after,
/// gradients reduced as one flat buffer per unit, and the optimizer's
/// `zshard.adamw` updates rewritten onto this rank's shard.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/BufferOwners.h"
#include "zshard/Analysis/Microbatches.h"
#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/OptimizerAnalysis.h"
#include "zshard/Analysis/PhaseAnalysis.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Transforms/Passes.h"

#include "FlatBuffers.h"
#include "GradientSums.h"
#include "ShardOptimizer.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_SHARD
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

struct ShardPass : public mlir::zshard::impl::ShardBase<ShardPass> {
  using ShardBase::ShardBase;
  void runOnOperation() override;

  LogicalResult planUnit(UnitPlan &plan);
  /// Replaces the uses of the members by top-level ops of `phase` with
  /// slices of a gather placed before the first such op. Returns the gather
  /// and the last op using it, or {null, null} when no op of that phase uses
  /// the unit. With `microbatch`, only ops of that microbatch count (-1: ops
  /// of none).
  std::pair<Value, Operation *>
  gatherFor(UnitPlan &plan, Value shard, Phase phase, bool alsoBackward,
            std::optional<int64_t> microbatch = std::nullopt);
  /// Packs the members' gradients into one flat buffer, after the last of
  /// them.
  Value packGradients(UnitPlan &plan, OpBuilder &builder);
  LogicalResult shardUnit(UnitPlan &plan);
  LogicalResult replicateUnit(UnitPlan &plan);
  /// Rounds each buffer to its unit's buffer type before its first use.
  void roundBuffers(ModuleOp module);
  /// Each zshard.batch_mean becomes an all_reduce avg over the whole grid.
  LogicalResult reduceBatchMeans(ArrayRef<UnitPlan> plans);

  // Per-run state.
  func::FuncOp step;
  const StepContract *contract = nullptr;
  PhaseAnalysis *phases = nullptr;
  OptimizerAnalysis *optimizer = nullptr;
  Value rankCoord;
  SmallVector<PartialSum> partialSums;
  SmallVector<Value> newResults;
  SmallVector<DictionaryAttr> newResultAttrs;
  llvm::BitVector deadArgs;
  llvm::BitVector deadResults;
};

Block &body(func::FuncOp step) { return step.front(); }

/// The top-level ops of the step that use `value`, in block order.
SmallVector<Operation *> topLevelUsers(Value value, Block &block) {
  SmallVector<Operation *> users;
  for (Operation *user : value.getUsers())
    if (Operation *top = block.findAncestorOpInBlock(*user))
      if (!llvm::is_contained(users, top))
        users.push_back(top);
  llvm::sort(users,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return users;
}

} // namespace

LogicalResult ShardPass::planUnit(UnitPlan &plan) {
  UnitOp unit = plan.unit;
  std::optional<int64_t> shard = unit.getShardSize();
  if (!shard)
    return unit.emitOpError("zshard-shard needs a grid of static size");
  plan.shardSize = *shard;
  for (auto member : unit.getMembers().getAsRange<MemberAttr>()) {
    const StepArgument *param = contract->lookupParam(member.getName());
    if (!param)
      return unit.emitOpError() << "member '" << member.getName()
                                << "' is not a parameter of the step";
    if (member.getShape().empty())
      return unit.emitOpError()
             << "member '" << member.getName()
             << "' is a scalar; zshard-shard needs rank >= 1";
    const ParamUpdate *update = optimizer->lookup(param->index);
    AdamWOp updateOp = update->op;
    FailureOr<SmallVector<linalg::GenericOp>> sums =
        findGradientSums(updateOp.getGrad(), updateOp, param->name);
    if (failed(sums))
      return failure();
    plan.members.push_back({param->index, member, update, std::move(*sums)});
  }
  for (const StepArgument *state : contract->getArguments(ArgRole::OptState)) {
    bool mine = llvm::any_of(plan.members, [&](const Member &m) {
      return contract->getArguments()[m.argIndex].name == state->param;
    });
    if (!mine)
      continue;
    StringRef slot = StringRef(state->name).drop_front(state->param.size() + 1);
    auto it = llvm::find_if(plan.slots,
                            [&](const auto &s) { return s.first == slot; });
    if (it == plan.slots.end())
      plan.slots.push_back({slot.str(), state->type.getElementType()});
    else if (it->second != state->type.getElementType())
      return unit.emitOpError()
             << "optimizer state slot '" << slot
             << "' has different element types across the unit's members";
  }
  return success();
}

std::pair<Value, Operation *>
ShardPass::gatherFor(UnitPlan &plan, Value shard, Phase phase,
                     bool alsoBackward, std::optional<int64_t> microbatch) {
  Block &block = body(step);
  SmallVector<Operation *> users;
  for (const Member &m : plan.members)
    for (Operation *user :
         topLevelUsers(block.getArgument(m.argIndex), block)) {
      if (microbatch && getMicrobatch(user).value_or(-1) != *microbatch)
        continue;
      std::optional<Phase> p = phases->getPhase(user);
      if (p == phase || (alsoBackward && p == Phase::Backward))
        users.push_back(user);
    }
  if (users.empty())
    return {Value(), nullptr};
  llvm::sort(users,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  UnitOp unit = plan.unit;
  Type element = unit.getParamType();
  OpBuilder builder(users.front());
  Location loc = unitLoc(unit);
  auto fullType = RankedTensorType::get({unit.getPaddedSize()}, element);
  Value full =
      AllGatherOp::create(builder, loc, fullType, shard, unit.getGridAttr(),
                          builder.getDenseI64ArrayAttr(unit.getShardAxes()),
                          FlatSymbolRefAttr::get(unit.getSymNameAttr()));
  ++numGathers;
  for (const Member &m : plan.members) {
    Value slice = extractMember(builder, loc, full, m.layout, element);
    block.getArgument(m.argIndex).replaceUsesWithIf(slice, [&](OpOperand &use) {
      Operation *top = block.findAncestorOpInBlock(*use.getOwner());
      return top && llvm::is_contained(users, top);
    });
  }
  return {full, users.back()};
}

Value ShardPass::packGradients(UnitPlan &plan, OpBuilder &builder) {
  UnitOp unit = plan.unit;
  Block &block = body(step);
  Operation *last = nullptr;
  for (const Member &m : plan.members) {
    AdamWOp update = m.update->op;
    Value grad = update.getGrad();
    Operation *def = block.findAncestorOpInBlock(*grad.getDefiningOp());
    if (!last || last->isBeforeInBlock(def))
      last = def;
  }
  builder.setInsertionPointAfter(last);
  SmallVector<Value> grads;
  for (const Member &m : plan.members) {
    AdamWOp update = m.update->op;
    grads.push_back(update.getGrad());
  }
  return packMembers(builder, unitLoc(unit), unit.getPaddedSize(),
                     plan.layouts(), grads, unit.getReduceType());
}

LogicalResult ShardPass::shardUnit(UnitPlan &plan) {
  UnitOp unit = plan.unit;
  Block &block = body(step);
  Location loc = unitLoc(unit);
  MLIRContext *ctx = &getContext();
  Builder b(ctx);
  auto unitRef = FlatSymbolRefAttr::get(unit.getSymNameAttr());
  int64_t S = plan.shardSize;

  // The shard arguments: the parameters, then one per optimizer-state slot.
  // The init spec of each member (of its state in `slot`), for the runtime
  // to build this rank's shard exactly as an unsharded run builds the
  // members.
  auto memberInits = [&](StringRef slot) {
    SmallVector<Attribute> inits;
    for (const Member &m : plan.members) {
      std::string name = contract->getArguments()[m.argIndex].name;
      if (!slot.empty())
        name += "." + slot.str();
      InitSpec spec; // zeros
      for (const StepArgument &arg : contract->getArguments())
        if (arg.name == name && arg.init)
          spec = *arg.init;
      inits.push_back(InitAttr::get(b.getContext(), spec));
    }
    return b.getArrayAttr(inits);
  };
  // A slot's shard stays in host memory when its members' state was there.
  auto slotOffloaded = [&](StringRef slot) {
    return llvm::any_of(plan.members, [&](const Member &m) {
      std::string name =
          contract->getArguments()[m.argIndex].name + "." + slot.str();
      return llvm::any_of(
          contract->getArguments(), [&](const StepArgument &arg) {
            return arg.name == name && arg.placement == Placement::Host;
          });
    });
  };
  auto attrs = [&](Role role, StringRef slot, bool withInits) {
    std::string name = unit.getSymName().str();
    if (!slot.empty())
      name += "." + slot.str();
    SmallVector<NamedAttribute> list = {
        b.getNamedAttr(contract::kRole, RoleAttr::get(b.getContext(), role)),
        b.getNamedAttr(contract::kName, b.getStringAttr(name)),
        b.getNamedAttr(contract::kUnit, unitRef)};
    if (!slot.empty())
      list.push_back(b.getNamedAttr(contract::kSlot, b.getStringAttr(slot)));
    if (withInits)
      list.push_back(b.getNamedAttr(contract::kInits, memberInits(slot)));
    // Placement is an argument's (the runtime's buffer); results carry none.
    if (withInits && !slot.empty() && slotOffloaded(slot))
      list.push_back(b.getNamedAttr(
          contract::kPlacement,
          ArgPlacementAttr::get(b.getContext(), Placement::Host)));
    return b.getDictionaryAttr(list);
  };
  auto shardType = [&](Type element) {
    return RankedTensorType::get({S}, element);
  };
  // zero1 keeps whole parameters (and takes this rank's part of them for the
  // optimizer below); the other strategies take a parameter shard.
  Strategy strategy = unit.getStrategy();
  bool paramsSharded = strategy != Strategy::Zero1;
  Value paramShard;
  if (paramsSharded) {
    (void)step.insertArgument(step.getNumArguments(),
                              shardType(unit.getParamType()),
                              attrs(Role::ParamShard, "", true), loc);
    paramShard = block.getArguments().back();
  }
  SmallVector<Value> stateShards;
  for (auto &[slot, type] : plan.slots) {
    (void)step.insertArgument(step.getNumArguments(), shardType(type),
                              attrs(Role::OptStateShard, slot, true), loc);
    stateShards.push_back(block.getArguments().back());
  }
  deadArgs.resize(step.getNumArguments());

  // Gathers and releases: for a step accumulating microbatches, in each
  // microbatch (then for the ops of none), or once kept through all of them.
  bool reshard =
      strategy == Strategy::FullShard || strategy == Strategy::HybridShard;
  SmallVector<std::optional<int64_t>> groups = {std::nullopt};
  if (int64_t count = getNumMicrobatches(step); count > 1) {
    if (microbatchGathers == MicrobatchGathers::Keep) {
      reshard = false;
    } else {
      groups.clear();
      for (int64_t i = 0; i < count; ++i)
        groups.push_back(i);
      groups.push_back(-1);
    }
  }
  auto gather = [&](Phase phase, bool alsoBackward,
                    std::optional<int64_t> group) {
    auto [full, last] = gatherFor(plan, paramShard, phase, alsoBackward, group);
    if (!full)
      return;
    OpBuilder after(last->getBlock(), ++Block::iterator(last));
    ReleaseOp::create(after, loc, full);
  };
  for (std::optional<int64_t> group : groups) {
    if (!paramsSharded)
      break;
    gather(Phase::Forward, !reshard, group);
    if (reshard)
      gather(Phase::Backward, false, group);
  }

  // Gradients: one flat buffer, reduce-scattered.
  OpBuilder builder(ctx);
  Value flat = packGradients(plan, builder);
  Type reduce = unit.getReduceType();
  Value gradShard = ReduceScatterOp::create(
      builder, loc, shardType(reduce),
      ReduceKindAttr::get(ctx, ReduceKind::Avg), flat, unit.getGridAttr(),
      b.getDenseI64ArrayAttr(unit.getShardAxes()), unitRef);
  ++numReductions;
  // Hybrid: the shard group averaged its gradients; replicas average theirs.
  if (unit.isHybrid()) {
    gradShard = AllReduceOp::create(
        builder, loc, gradShard.getType(),
        ReduceKindAttr::get(ctx, ReduceKind::Avg), gradShard,
        unit.getGridAttr(), b.getDenseI64ArrayAttr(unit.getReplicateAxes()),
        unitRef);
    ++numReductions;
  }

  // The optimizer, on this rank's part of each member.
  UnitShards updated = shardOptimizer(
      builder, *contract, block, plan, rankCoord, {paramShard, stateShards},
      gradShard, partialSums, deadArgs, deadResults);
  Value paramOut = updated.param;
  SmallVector<Value> stateOuts = std::move(updated.states);
  if (paramsSharded) {
    newResults.push_back(paramOut);
    newResultAttrs.push_back(attrs(Role::ParamShardOut, "", false));
  } else {
    // zero1: every rank gets the whole updated parameters back.
    auto fullType =
        RankedTensorType::get({unit.getPaddedSize()}, unit.getParamType());
    Value full = AllGatherOp::create(
        builder, loc, fullType, paramOut, unit.getGridAttr(),
        b.getDenseI64ArrayAttr(unit.getShardAxes()), unitRef);
    ++numGathers;
    for (const Member &m : plan.members) {
      newResults.push_back(
          extractMember(builder, loc, full, m.layout, unit.getParamType()));
      unsigned paramOutIndex = 0;
      for (const StepResult &result : contract->getResults())
        if (result.role == ResultRole::ParamOut &&
            result.name == m.layout.getName())
          paramOutIndex = result.index;
      newResultAttrs.push_back(step.getResultAttrDict(paramOutIndex));
    }
  }
  for (auto [value, slot] : llvm::zip(stateOuts, plan.slots)) {
    newResults.push_back(value);
    newResultAttrs.push_back(attrs(Role::OptStateShardOut, slot.first, false));
  }
  return success();
}

LogicalResult ShardPass::replicateUnit(UnitPlan &plan) {
  UnitOp unit = plan.unit;
  OpBuilder builder(&getContext());
  Value flat = packGradients(plan, builder);
  Location loc = unitLoc(unit);
  Value reduced = AllReduceOp::create(
      builder, loc, flat.getType(),
      ReduceKindAttr::get(&getContext(), ReduceKind::Avg), flat,
      unit.getGridAttr(), builder.getDenseI64ArrayAttr(unit.getShardAxes()),
      FlatSymbolRefAttr::get(unit.getSymNameAttr()));
  ++numReductions;
  for (const Member &m : plan.members) {
    AdamWOp update = m.update->op;
    if (update->isBeforeInBlock(reduced.getDefiningOp()))
      return unit.emitOpError()
             << "the optimizer update of '" << m.layout.getName()
             << "' runs before the unit's last gradient";
    // Reduced in the unit's reduce type, used in the gradient's own (bf16
    // gradients reduced in f32, say).
    Value oldGrad = update.getGrad();
    Type element = cast<RankedTensorType>(oldGrad.getType()).getElementType();
    Value grad = convertElements(
        builder, loc,
        extractMember(builder, loc, reduced, m.layout, unit.getReduceType()),
        element);
    update.getGradMutable().assign(grad);
    // Sums over the gradient now read the reduced one (no further
    // collective: every rank holds all of it).
    for (linalg::GenericOp sum : m.sums) {
      linalg::GenericOp moved = rebuildSum(builder, sum, grad);
      sum->replaceAllUsesWith(moved);
      sum->erase();
      moveDependentsAfter(moved, moved->getResults());
    }
  }
  return success();
}

void ShardPass::roundBuffers(ModuleOp module) {
  BufferOwners owners(module, *contract);
  owners.run();
  Block &block = body(step);
  for (const StepArgument *buffer : contract->getArguments(ArgRole::Buffer)) {
    UnitOp unit = owners.lookup(buffer->index);
    std::optional<Type> type = unit ? unit.getBufferType() : std::nullopt;
    Value value = block.getArgument(buffer->index);
    SmallVector<Operation *> users = topLevelUsers(value, block);
    if (!type || users.empty())
      continue;
    OpBuilder builder(users.front());
    Value rounded =
        roundElements(builder, unitLoc(unit), value, cast<FloatType>(*type));
    if (rounded == value)
      continue;
    value.replaceUsesWithIf(rounded, [&](OpOperand &use) {
      Operation *top = block.findAncestorOpInBlock(*use.getOwner());
      return top && llvm::is_contained(users, top);
    });
    ++numRoundedBuffers;
  }
}

LogicalResult ShardPass::reduceBatchMeans(ArrayRef<UnitPlan> plans) {
  SmallVector<BatchMeanOp> means;
  step.walk([&](BatchMeanOp op) { means.push_back(op); });
  if (means.empty())
    return success();
  // Every rank of the grid holds a slice of the batch: the mean is over
  // all of its axes.
  UnitOp first = plans.front().unit;
  SmallVector<int64_t> axes(first.getShardAxes());
  llvm::append_range(axes, first.getReplicateAxes());
  llvm::sort(axes);
  for (const UnitPlan &plan : plans) {
    UnitOp unit = plan.unit;
    SmallVector<int64_t> other(unit.getShardAxes());
    llvm::append_range(other, unit.getReplicateAxes());
    llvm::sort(other);
    if (unit.getGrid() != first.getGrid() || other != axes)
      return unit.emitOpError()
             << "spans other grid axes than unit '" << first.getSymName()
             << "'; zshard-shard needs one data-parallel group for the "
                "batch means";
  }
  for (BatchMeanOp mean : means) {
    OpBuilder builder(mean);
    Value reduced = AllReduceOp::create(
        builder, mean.getLoc(), mean.getType(),
        ReduceKindAttr::get(&getContext(), ReduceKind::Avg), mean.getInput(),
        first.getGridAttr(), builder.getDenseI64ArrayAttr(axes),
        FlatSymbolRefAttr());
    mean.getResult().replaceAllUsesWith(reduced);
    mean.erase();
    ++numReductions;
  }
  return success();
}

void ShardPass::runOnOperation() {
  ModuleOp module = getOperation();
  StepContract stepContract(module);
  if (failed(stepContract.run()))
    return signalPassFailure();
  step = stepContract.getStep();
  PhaseAnalysis phaseAnalysis(step);
  if (failed(phaseAnalysis.run())) {
    emitError(getReportLoc(step),
              "zshard-shard: cannot derive the phases of the step");
    return signalPassFailure();
  }
  OptimizerAnalysis optimizerAnalysis(stepContract, phaseAnalysis);
  if (failed(optimizerAnalysis.run()))
    return signalPassFailure();
  contract = &stepContract;
  phases = &phaseAnalysis;
  optimizer = &optimizerAnalysis;
  newResults.clear();
  newResultAttrs.clear();
  partialSums.clear();
  deadArgs = llvm::BitVector(step.getNumArguments());
  deadResults = llvm::BitVector(step.getNumResults());

  SmallVector<UnitPlan> plans;
  for (UnitOp unit : module.getOps<UnitOp>()) {
    UnitPlan plan;
    plan.unit = unit;
    if (failed(planUnit(plan)))
      return signalPassFailure();
    plans.push_back(std::move(plan));
  }
  if (plans.empty()) {
    emitError(getReportLoc(module),
              "zshard-shard: the module has no units; run "
              "zshard-form-units first");
    return signalPassFailure();
  }

  roundBuffers(module);
  if (failed(reduceBatchMeans(plans)))
    return signalPassFailure();
  for (UnitPlan &plan : plans) {
    Strategy strategy = plan.unit.getStrategy();
    if (strategy == Strategy::NoShard) {
      if (failed(replicateUnit(plan)))
        return signalPassFailure();
      continue;
    }
    if (!rankCoord) {
      OpBuilder entry = OpBuilder::atBlockBegin(&body(step));
      rankCoord = shard::ProcessMultiIndexOp::create(
                      entry, getStepLoc(step), TypeRange{entry.getIndexType()},
                      plan.unit.getGridAttr(),
                      entry.getDenseI16ArrayAttr(
                          {static_cast<int16_t>(plan.unit.getShardAxes()[0])}))
                      .getResult()[0];
    }
    if (plan.unit.getShardAxes().size() != 1) {
      plan.unit.emitOpError("zshard-shard supports one shard axis for now");
      return signalPassFailure();
    }
    if (failed(shardUnit(plan)))
      return signalPassFailure();
  }

  if (!partialSums.empty()) {
    if (failed(combinePartialSums(partialSums)))
      return signalPassFailure();
    ++numReductions;
  }

  // The old updates are dead now; then the sharded arguments and results go.
  auto ret = cast<func::ReturnOp>(body(step).getTerminator());
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i) {
    if (deadResults.test(i))
      continue;
    results.push_back(ret.getOperand(i));
    resultAttrs.push_back(step.getResultAttrDict(i));
  }
  results.append(newResults);
  resultAttrs.append(newResultAttrs);
  OpBuilder builder(ret);
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  for (UnitPlan &plan : plans)
    for (const Member &m : plan.members)
      if (plan.unit.getStrategy() != Strategy::NoShard)
        m.update->op->erase();
  for (unsigned i : deadArgs.set_bits())
    if (!body(step).getArgument(i).use_empty()) {
      emitError(getReportLoc(step))
          << "zshard-shard: argument #" << i << " is still used after sharding";
      return signalPassFailure();
    }
  if (failed(step.eraseArguments(deadArgs)))
    return signalPassFailure();
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  step.setFunctionType(
      FunctionType::get(&getContext(), step.getArgumentTypes(), resultTypes));
  step.setAllResultAttrs(resultAttrs);
  rankCoord = Value();
}
