//===- Manifest.cpp - the artifact manifest -------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Target/Artifact.h"

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/abi/Fnv1a.h"
#include "zshard/abi/ManifestSchema.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::zshard;
namespace key = ::zshard_abi::manifest;

::zshard_abi::Strategy zshard::toAbiStrategy(Strategy strategy) {
  using Abi = ::zshard_abi::Strategy;
  static_assert(int(Strategy::NoShard) == int(Abi::NoShard) &&
                    int(Strategy::Zero1) == int(Abi::Zero1) &&
                    int(Strategy::ShardGradOp) == int(Abi::ShardGradOp) &&
                    int(Strategy::FullShard) == int(Abi::FullShard) &&
                    int(Strategy::HybridShard) == int(Abi::HybridShard) &&
                    int(Strategy::HybridShardZero2) ==
                        int(Abi::HybridShardZero2),
                "the dialect's Strategy is the ABI's");
  return Abi(int(strategy));
}

std::string zshard::getDTypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width == 1)
      return "i1";
    if (width == 8 || width == 16 || width == 32 || width == 64)
      return (integer.isUnsigned() ? "u" : "i") + std::to_string(width);
  }
  return "";
}

/// The manifest's spelling of `role`: the runtime's (zshard/abi/Roles.h).
static StringRef manifestRole(Role role) {
  if (std::optional<::zshard_abi::ArgRole> arg = toAbiArgRole(role))
    return ::zshard_abi::roleName(*arg);
  return ::zshard_abi::roleName(*toAbiResultRole(role));
}

static std::string describe(StringRef role, StringRef name,
                            RankedTensorType type) {
  std::string dims;
  llvm::raw_string_ostream os(dims);
  llvm::interleave(type.getShape(), os, "x");
  return (role + ":" + name + ":" + getDTypeName(type.getElementType()) + ":" +
          dims + ";")
      .str();
}

std::string zshard::getCanonicalSignature(StepABIAttr abi) {
  std::string text;
  for (ABIArgumentAttr argument : abi.getArgumentRecords())
    text += describe(manifestRole(argument.getRole()), argument.getName(),
                     argument.getType());
  text += "->";
  for (ABIResultAttr result : abi.getResultRecords())
    text += describe((manifestRole(result.getRole()) +
                      (result.isInPlace() ? "(in_place)" : ""))
                         .str(),
                     result.getName(), result.getType());
  return text;
}

std::string zshard::getSignatureHash(StepABIAttr abi) {
  return ::zshard_abi::hex16(::zshard_abi::fnv1a64(getCanonicalSignature(abi)));
}

FailureOr<StepABIAttr> zshard::getStepABI(ModuleOp module) {
  Attribute record = module->getAttr(contract::kABI);
  if (auto abi = dyn_cast_or_null<StepABIAttr>(record))
    return abi;
  if (record)
    return module.emitError("zshard.abi is not a step ABI record "
                            "(#zshard.step_abi): ")
           << record;
  return module.emitError("the module has no step ABI record (zshard.abi): "
                          "run --zshard-record-abi before lowering");
}

template <typename Range> static llvm::json::Array toArray(Range &&values) {
  llvm::json::Array array;
  for (auto value : values)
    array.push_back(value);
  return array;
}

/// Init specs in the manifest's spelling (zshard_abi::InitSpec::str).
static llvm::json::Array toSpecs(ArrayAttr inits) {
  llvm::json::Array array;
  for (auto init : inits.getAsRange<InitAttr>())
    array.push_back(init.getSpec().str());
  return array;
}

/// A unit as the runtime needs it to build and save shards: layout, members
/// with their init specs, and the optimizer-state slots with theirs.
static llvm::json::Object describeUnit(ABIUnitAttr unit) {
  llvm::json::Array members;
  for (auto [member, init] :
       llvm::zip(unit.getMembers().getAsRange<MemberAttr>(),
                 unit.getInits().getAsRange<InitAttr>()))
    members.push_back(
        llvm::json::Object{{key::kName, member.getName()},
                           {key::kShape, toArray(member.getShape())},
                           {key::kOffset, member.getOffset()},
                           {key::kInit, init.getSpec().str()}});
  llvm::json::Array slots;
  for (auto slot : unit.getSlots().getAsRange<ABISlotAttr>())
    slots.push_back(
        llvm::json::Object{{key::kSlot, slot.getSlot()},
                           {key::kDType, getDTypeName(slot.getType())},
                           {key::kInits, toSpecs(slot.getInits())}});
  ArrayRef<int64_t> replicate;
  if (DenseI64ArrayAttr axes = unit.getReplicateAxes())
    replicate = axes.asArrayRef();
  llvm::json::Object entry{
      {key::kName, unit.getName()},
      {key::kStrategy,
       ::zshard_abi::strategyName(toAbiStrategy(unit.getStrategy()))},
      {key::kShardAxes, toArray(unit.getShardAxes().asArrayRef())},
      {key::kReplicateAxes, toArray(replicate)},
      {key::kPadded, unit.getPadded()},
      {key::kShardSize, unit.getShardSize()},
      {key::kParamDType, getDTypeName(unit.getParamType())},
      {key::kReduceDType, getDTypeName(unit.getReduceType())},
      {key::kMembers, std::move(members)},
      {key::kSlots, std::move(slots)}};
  if (Type buffer = unit.getBufferType())
    entry[key::kBufferDType] = getDTypeName(buffer);
  return entry;
}

static llvm::json::Array shapeOf(RankedTensorType type) {
  return toArray(type.getShape());
}

/// The ABI record of a lowered step, checked against the step it names: an
/// llvm.func taking one buffer per argument and result.
static FailureOr<StepABIAttr> getLoweredStepABI(ModuleOp module) {
  FailureOr<StepABIAttr> abi = getStepABI(module);
  if (failed(abi))
    return failure();
  auto step = module.lookupSymbol<LLVM::LLVMFuncOp>(abi->getStep());
  if (!step)
    return module.emitError("the module has no llvm.func @")
           << abi->getStep()
           << ", the step its ABI record names (write the manifest of a "
              "lowered step)";
  size_t numBuffers = abi->getArguments().size() + abi->getResults().size();
  if (step.getNumArguments() != numBuffers)
    return step.emitError("the step takes ")
           << step.getNumArguments() << " buffers but its ABI record has "
           << numBuffers << " arguments and results";
  return abi;
}

FailureOr<llvm::json::Object> zshard::buildManifest(ModuleOp module,
                                                    ModuleOp eval) {
  FailureOr<StepABIAttr> record = getLoweredStepABI(module);
  if (failed(record))
    return failure();
  StepABIAttr abi = *record;
  llvm::json::Array arguments;
  for (auto [index, argument] : llvm::enumerate(abi.getArgumentRecords())) {
    llvm::json::Object entry{
        {key::kIndex, int64_t(index)},
        {key::kRole, manifestRole(argument.getRole())},
        {key::kName, argument.getName()},
        {key::kDType, getDTypeName(argument.getType().getElementType())},
        {key::kShape, shapeOf(argument.getType())}};
    if (InitAttr init = argument.getInit())
      entry[key::kInit] = init.getSpec().str();
    if (!argument.getParam().empty())
      entry[key::kParam] = argument.getParam();
    if (!argument.getUnit().empty())
      entry[key::kUnit] = argument.getUnit();
    if (!argument.getSlot().empty())
      entry[key::kSlot] = argument.getSlot();
    if (argument.getPlacement() == ArgPlacement::Host)
      entry[key::kPlacement] = key::kPlacementHost;
    if (BoolAttr persistent = argument.getPersistent())
      entry[key::kPersistent] = persistent.getValue();
    if (FloatAttr recorded = argument.getRecorded())
      entry[key::kDefault] = recorded.getValueAsDouble();
    arguments.push_back(std::move(entry));
  }
  llvm::json::Array results;
  for (auto [index, result] : llvm::enumerate(abi.getResultRecords())) {
    llvm::json::Object entry{
        {key::kIndex, int64_t(index)},
        {key::kRole, manifestRole(result.getRole())},
        {key::kDType, getDTypeName(result.getType().getElementType())},
        {key::kShape, shapeOf(result.getType())}};
    if (!result.getName().empty())
      entry[key::kName] = result.getName();
    if (!result.getUnit().empty())
      entry[key::kUnit] = result.getUnit();
    if (!result.getSlot().empty())
      entry[key::kSlot] = result.getSlot();
    if (result.isInPlace())
      entry[key::kInPlace] = true;
    results.push_back(std::move(entry));
  }
  llvm::json::Array units;
  for (ABIUnitAttr unit : abi.getUnitRecords())
    units.push_back(describeUnit(unit));
  // The device grid, when the step is sharded: the runtime builds it and the
  // collectives name its axes. A dynamic size is -1 (taken from the launch).
  llvm::json::Value grid = nullptr;
  if (!abi.getGrid().empty())
    grid = llvm::json::Object{
        {key::kName, abi.getGrid()},
        {key::kShape, abi.getGridShape()
                          ? toArray(abi.getGridShape().asArrayRef())
                          : llvm::json::Array()}};
  llvm::json::Object moduleAttrs;
  if (DictionaryAttr recorded = abi.getModuleAttrs())
    for (NamedAttribute attr : recorded)
      if (auto text = dyn_cast<StringAttr>(attr.getValue()))
        moduleAttrs[attr.getName().getValue()] = text.getValue();
  llvm::json::Object manifest{{key::kFormat, key::kFormatName},
                              {key::kVersionKey, key::kVersion},
                              {key::kLibrary, key::kDefaultLibrary},
                              {key::kEntry, key::kDefaultEntry},
                              {key::kSignature, getSignatureHash(abi)},
                              {key::kRanks, abi.getRanks()},
                              {key::kGrid, std::move(grid)},
                              {key::kModule, std::move(moduleAttrs)},
                              {key::kArguments, std::move(arguments)},
                              {key::kResults, std::move(results)},
                              {key::kUnits, std::move(units)}};
  // The device the step was compiled for, so that the runtime refuses to
  // run it on another.
  if (abi.getTarget() == StepTarget::CUDA) {
    manifest[key::kTarget] = key::kTargetCuda;
    if (!abi.getChip().empty())
      manifest[key::kChip] = abi.getChip();
  } else {
    manifest[key::kTarget] = key::kTargetCpu;
  }
  if (!eval)
    return manifest;
  // The eval entry: its signature and the peak of its memory plan.
  FailureOr<StepABIAttr> evalRecord = getLoweredStepABI(eval);
  if (failed(evalRecord))
    return failure();
  IntegerAttr peak = evalRecord->getPeakBytes();
  if (!peak)
    return eval.emitError("the eval entry's step ABI record has no "
                          "peak_bytes (its memory plan's peak)");
  manifest[key::kEval] =
      llvm::json::Object{{key::kLibrary, key::kDefaultEvalLibrary},
                         {key::kEntry, key::kDefaultEvalEntry},
                         {key::kSignature, getSignatureHash(*evalRecord)},
                         {key::kPeakBytes, peak.getInt()}};
  return manifest;
}

std::string zshard::printManifest(llvm::json::Object manifest) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  return text;
}
