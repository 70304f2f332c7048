//===- StepSignature.cpp - the contract signature of a step ---------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/StepSignature.h"

#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"
#include "zshard/Dialect/ZShard/IR/ZShardContract.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace ::zshard::gen;
using ::zshard_abi::ArgRole;
using ::zshard_abi::InitSpec;
using ::zshard_abi::ResultRole;
namespace contract = mlir::zshard::contract;

// Defined in its namespace: `zshard::` alone is ambiguous here, between this
// project's ::zshard and mlir::zshard (the dialect).
namespace zshard::gen {
std::string ownerPath(StringRef name) {
  for (StringRef suffix : {".weight", ".bias"})
    if (name.ends_with(suffix))
      return name.drop_back(suffix.size()).str();
  return name.str();
}
} // namespace zshard::gen

StepSignature::StepSignature(StepBuilder &sb) : sb(sb) {
  slotNames = {"exp_avg", "exp_avg_sq"};
  if (sb.dtype() == DType::BF16)
    slotNames.push_back("master");
}

unsigned StepSignature::addParam(StringRef name, ArrayRef<int64_t> shape,
                                 StringRef init) {
  paramSpecs.push_back({name.str(), llvm::to_vector(shape), init.str()});
  return paramSpecs.size() - 1;
}

void StepSignature::addBatch(StringRef name, ArrayRef<int64_t> shape,
                             Type elt) {
  batchSpecs.push_back({name.str(), llvm::to_vector(shape), elt});
}

func::FuncOp StepSignature::create(ModuleOp module) {
  ImplicitLocOpBuilder &b = sb.builder();
  MLIRContext *ctx = b.getContext();
  auto str = [&](StringRef s) { return b.getStringAttr(s); };
  auto attr = [&](StringRef key, StringRef value) {
    return NamedAttribute(str(key), str(value));
  };
  auto role = [&](auto value) {
    return NamedAttribute(
        str(contract::kRole),
        mlir::zshard::RoleAttr::get(ctx, mlir::zshard::fromAbiRole(value)));
  };
  auto init = [&](StringRef spec) {
    std::optional<InitSpec> parsed =
        InitSpec::parse(std::string_view(spec.data(), spec.size()));
    assert(parsed && "zshard-gen writes valid init specs");
    return NamedAttribute(str(contract::kInit),
                          mlir::zshard::InitAttr::get(ctx, *parsed));
  };

  SmallVector<Type> argTypes, resultTypes;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  Type f32 = sb.f32();
  auto scalar = RankedTensorType::get({}, f32);

  for (const ParamSpec &p : paramSpecs) {
    argTypes.push_back(sb.tensorType(p.shape, sb.act()));
    argAttrs.push_back(
        DictionaryAttr::get(ctx, {role(ArgRole::Param),
                                  attr("zshard.name", p.name), init(p.init)}));
  }
  for (StringRef slot : slotNames) {
    for (const ParamSpec &p : paramSpecs) {
      argTypes.push_back(sb.tensorType(p.shape, f32));
      std::string name = p.name + "." + slot.str();
      argAttrs.push_back(DictionaryAttr::get(
          ctx, {role(ArgRole::OptState), attr("zshard.name", name),
                attr("zshard.param", p.name),
                init(slot == "master" ? "param" : "zeros")}));
    }
  }
  for (const BatchSpec &bs : batchSpecs) {
    argTypes.push_back(sb.tensorType(bs.shape, bs.elt));
    argAttrs.push_back(DictionaryAttr::get(
        ctx, {role(ArgRole::Batch), attr("zshard.name", bs.name)}));
  }
  for (StringRef hyper : {"lr", "step"}) {
    argTypes.push_back(scalar);
    argAttrs.push_back(DictionaryAttr::get(
        ctx, {role(ArgRole::Hyper), attr("zshard.name", hyper)}));
  }

  resultTypes.push_back(scalar);
  resultAttrs.push_back(DictionaryAttr::get(ctx, {role(ResultRole::Loss)}));
  for (const ParamSpec &p : paramSpecs) {
    resultTypes.push_back(sb.tensorType(p.shape, sb.act()));
    resultAttrs.push_back(DictionaryAttr::get(
        ctx, {role(ResultRole::ParamOut), attr("zshard.name", p.name)}));
  }
  for (StringRef slot : slotNames) {
    for (const ParamSpec &p : paramSpecs) {
      resultTypes.push_back(sb.tensorType(p.shape, f32));
      resultAttrs.push_back(DictionaryAttr::get(
          ctx, {role(ResultRole::OptStateOut),
                attr("zshard.name", p.name + "." + slot.str())}));
    }
  }

  b.setInsertionPointToEnd(module.getBody());
  StepBuilder::PathScope root(sb, "");
  func = func::FuncOp::create(b, "train_step",
                              b.getFunctionType(argTypes, resultTypes));
  func->setAttr("zshard.step", b.getUnitAttr());
  if (!moduleClasses.empty()) {
    SmallVector<NamedAttribute> classes;
    for (const auto &[path, className] : moduleClasses)
      classes.push_back(b.getNamedAttr(path, b.getStringAttr(className)));
    func->setAttr("zshard.module_classes", b.getDictionaryAttr(classes));
  }
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  Block *entry = func.addEntryBlock();
  // The step is where the module is; its arguments are at the root path.
  func->setLoc(module.getLoc());
  b.setInsertionPointToStart(entry);
  return func;
}

Value StepSignature::param(unsigned i) const { return func.getArgument(i); }

Value StepSignature::state(unsigned slot, unsigned i) const {
  return func.getArgument(paramSpecs.size() * (1 + slot) + i);
}

Value StepSignature::batch(StringRef name) const {
  unsigned base = paramSpecs.size() * (1 + slotNames.size());
  for (auto [i, bs] : llvm::enumerate(batchSpecs))
    if (bs.name == name)
      return func.getArgument(base + i);
  llvm_unreachable("unknown batch input");
}

void StepSignature::addModuleClass(StringRef path, StringRef className) {
  moduleClasses.emplace_back(path.str(), className.str());
}

Value StepSignature::lr() const {
  return func.getArgument(func.getNumArguments() - 2);
}

Value StepSignature::step() const {
  return func.getArgument(func.getNumArguments() - 1);
}

void StepSignature::finish(Value loss, ArrayRef<Value> paramOuts,
                           ArrayRef<SmallVector<Value>> stateOuts) {
  assert(paramOuts.size() == paramSpecs.size() && "one output per param");
  assert(stateOuts.size() == slotNames.size() && "one list per slot");
  SmallVector<Value> results{loss};
  results.append(paramOuts.begin(), paramOuts.end());
  for (const SmallVector<Value> &slot : stateOuts) {
    assert(slot.size() == paramSpecs.size() && "one state per param");
    results.append(slot.begin(), slot.end());
  }
  StepBuilder::PathScope root(sb, "");
  func::ReturnOp::create(sb.builder(), results);
}
