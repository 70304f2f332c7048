//===- RecordABI.cpp - --zshard-record-abi --------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writes the step's ABI -- what the artifact's manifest says about its
/// arguments, results, units and grid -- as one typed attribute on the
/// module (`zshard.abi = #zshard.step_abi<...>`), read from the step
/// contract, the `zshard.unit`s and the `shard.grid` while they are still in
/// the IR. Lowering erases the units and the contract's attributes; the
/// record stays, and the manifest is written from it.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_RECORDABI
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

ArrayAttr getInits(MLIRContext *context, ArrayRef<InitSpec> specs) {
  SmallVector<Attribute> inits;
  for (const InitSpec &spec : specs)
    inits.push_back(InitAttr::get(context, spec));
  return ArrayAttr::get(context, inits);
}

ABIArgumentAttr recordArgument(const StepContract &contract,
                               const StepArgument &argument) {
  MLIRContext *context = contract.getStep().getContext();
  BoolAttr persistent;
  if (argument.role == ArgRole::Buffer)
    persistent = BoolAttr::get(context, argument.persistent);
  // A hyper's recorded value (zshard.default, checked by the contract).
  FloatAttr recorded = contract.getStep().getArgAttrOfType<FloatAttr>(
      argument.index, contract::kDefault);
  return ABIArgumentAttr::get(
      context, fromAbiRole(argument.role), argument.name, argument.type,
      argument.init ? InitAttr::get(context, *argument.init) : InitAttr(),
      argument.param, argument.unit, argument.slot,
      argument.placement == Placement::Host ? ArgPlacement::Host
                                            : ArgPlacement::Device,
      persistent, recorded);
}

ABIResultAttr recordResult(const StepContract &contract,
                           const StepResult &result) {
  // The unit and slot of the shard a result updates: those of the argument
  // of the same name.
  StringRef unit, slot;
  for (const StepArgument &argument : contract.getArguments())
    if (!argument.unit.empty() && argument.name == result.name) {
      unit = argument.unit;
      if (!argument.slot.empty())
        slot = argument.slot;
    }
  return ABIResultAttr::get(contract.getStep().getContext(),
                            fromAbiRole(result.role), result.name, result.type,
                            unit, slot, /*in_place=*/BoolAttr());
}

/// A unit as the runtime needs it to build and save shards: layout,
/// members with their init specs, and the optimizer-state slots with theirs.
/// Fails, naming the member, when a member's init spec is found neither on
/// the unit's parameter shard nor on a parameter of the step.
FailureOr<ABIUnitAttr> recordUnit(UnitOp unit, const StepContract &contract) {
  MLIRContext *context = unit.getContext();
  const StepArgument *paramShard = nullptr;
  SmallVector<const StepArgument *> stateShards;
  for (const StepArgument &arg : contract.getArguments()) {
    if (arg.unit != unit.getSymName())
      continue;
    if (arg.role == ArgRole::ParamShard)
      paramShard = &arg;
    else if (arg.role == ArgRole::OptStateShard)
      stateShards.push_back(&arg);
  }
  SmallVector<Attribute> inits;
  unsigned i = 0;
  for (auto member : unit.getMembers().getAsRange<MemberAttr>()) {
    std::optional<InitSpec> init;
    if (paramShard && i < paramShard->memberInits.size())
      init = paramShard->memberInits[i];
    else if (const StepArgument *param = contract.lookupParam(member.getName()))
      init = param->init;
    if (!init)
      return unit.emitError("zshard-record-abi: member '")
             << member.getName() << "' of unit @" << unit.getSymName()
             << " has no init spec: neither the unit's param_shard nor a "
                "param of the step gives one";
    inits.push_back(InitAttr::get(context, *init));
    ++i;
  }
  SmallVector<Attribute> slots;
  for (const StepArgument *state : stateShards)
    slots.push_back(ABISlotAttr::get(context, state->slot,
                                     state->type.getElementType(),
                                     getInits(context, state->memberInits)));
  std::optional<int64_t> shardSize = unit.getShardSize();
  DenseI64ArrayAttr replicate;
  if (!unit.getReplicateAxes().empty())
    replicate = DenseI64ArrayAttr::get(context, unit.getReplicateAxes());
  return ABIUnitAttr::get(
      context, unit.getSymName(), unit.getStrategy(),
      DenseI64ArrayAttr::get(context, unit.getShardAxes()), replicate,
      unit.getPaddedSize(), shardSize ? *shardSize : int64_t(-1),
      unit.getParamType(), unit.getReduceType(),
      unit.getBufferType() ? *unit.getBufferType() : Type(), unit.getMembers(),
      ArrayAttr::get(context, inits), ArrayAttr::get(context, slots));
}

struct RecordABI : public mlir::zshard::impl::RecordABIBase<RecordABI> {
  using RecordABIBase::RecordABIBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    if (!chip.empty() && target != StepTarget::CUDA) {
      emitError(module.getLoc(), "zshard-record-abi: chip=")
          << chip << " is for target=cuda only";
      return signalPassFailure();
    }
    StepContract contract(module);
    if (failed(contract.run()))
      return signalPassFailure();

    SmallVector<Attribute> arguments, results, units;
    for (const StepArgument &argument : contract.getArguments())
      arguments.push_back(recordArgument(contract, argument));
    for (const StepResult &result : contract.getResults())
      results.push_back(recordResult(contract, result));
    for (UnitOp unit : module.getOps<UnitOp>()) {
      FailureOr<ABIUnitAttr> record = recordUnit(unit, contract);
      if (failed(record))
        return signalPassFailure();
      units.push_back(*record);
    }

    // The device grid, when the step is sharded: the runtime builds it and
    // the collectives name its axes. A dynamic size is -1 (taken from the
    // launch) and counts as one rank.
    StringRef grid;
    DenseI64ArrayAttr gridShape;
    int64_t ranks = 1;
    for (auto gridOp : module.getOps<shard::GridOp>()) {
      SmallVector<int64_t> shape;
      for (int64_t dim : gridOp.getShape()) {
        shape.push_back(ShapedType::isDynamic(dim) ? int64_t(-1) : dim);
        ranks *= ShapedType::isDynamic(dim) ? 1 : dim;
      }
      grid = gridOp.getSymName();
      gridShape = DenseI64ArrayAttr::get(context, shape);
    }

    // The module's string attributes (model and producer facts the runtime
    // shows), as they are before lowering adds its own.
    SmallVector<NamedAttribute> strings;
    for (NamedAttribute attr : module->getAttrs())
      if (isa<StringAttr>(attr.getValue()))
        strings.push_back(attr);
    DictionaryAttr moduleAttrs;
    if (!strings.empty())
      moduleAttrs = DictionaryAttr::get(context, strings);

    module->setAttr(contract::kABI,
                    StepABIAttr::get(context, contract.getStep().getSymName(),
                                     ArrayAttr::get(context, arguments),
                                     ArrayAttr::get(context, results),
                                     ArrayAttr::get(context, units), grid,
                                     gridShape, ranks, moduleAttrs, target,
                                     chip, /*peak_bytes=*/nullptr));
  }
};

} // namespace
