//===- Manifest.cpp - the artifact manifest -------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Target/Artifact.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::zshard;

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

static std::string describe(StringRef role, StringRef name,
                            RankedTensorType type) {
  std::string dims;
  llvm::raw_string_ostream os(dims);
  llvm::interleave(type.getShape(), os, "x");
  return (role + ":" + name + ":" + getDTypeName(type.getElementType()) +
          ":" + dims + ";")
      .str();
}

std::string zshard::getCanonicalSignature(const StepContract &contract) {
  std::string text;
  for (const StepArgument &argument : contract.getArguments())
    text += describe(stringifyArgRole(argument.role), argument.name,
                     argument.type);
  text += "->";
  for (const StepResult &result : contract.getResults())
    text += describe(stringifyResultRole(result.role), result.name,
                     result.type);
  return text;
}

std::string zshard::getSignatureHash(const StepContract &contract) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : getCanonicalSignature(contract)) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  std::string hex;
  llvm::raw_string_ostream(hex) << llvm::format_hex_no_prefix(hash, 16);
  return hex;
}

static llvm::json::Array shapeOf(RankedTensorType type) {
  llvm::json::Array shape;
  for (int64_t dim : type.getShape())
    shape.push_back(dim);
  return shape;
}

llvm::json::Object zshard::buildManifest(const StepContract &contract,
                                         ModuleOp module) {
  llvm::json::Array arguments;
  for (const StepArgument &argument : contract.getArguments()) {
    llvm::json::Object entry{
        {"index", argument.index},
        {"role", stringifyArgRole(argument.role)},
        {"name", argument.name},
        {"dtype", getDTypeName(argument.type.getElementType())},
        {"shape", shapeOf(argument.type)}};
    if (argument.init)
      entry["init"] = argument.init->str();
    if (!argument.param.empty())
      entry["param"] = argument.param;
    arguments.push_back(std::move(entry));
  }
  llvm::json::Array results;
  for (const StepResult &result : contract.getResults()) {
    llvm::json::Object entry{
        {"index", result.index},
        {"role", stringifyResultRole(result.role)},
        {"dtype", getDTypeName(result.type.getElementType())},
        {"shape", shapeOf(result.type)}};
    if (!result.name.empty())
      entry["name"] = result.name;
    results.push_back(std::move(entry));
  }
  // The device grid, when the step is sharded: the runtime builds it and the
  // collectives name its axes. A dynamic size is -1 (taken from the launch).
  llvm::json::Value grid = nullptr;
  for (auto gridOp : module.getOps<shard::GridOp>()) {
    llvm::json::Array shape;
    for (int64_t dim : gridOp.getShape())
      shape.push_back(ShapedType::isDynamic(dim) ? int64_t(-1) : dim);
    grid = llvm::json::Object{{"name", gridOp.getSymName()},
                              {"shape", std::move(shape)}};
  }
  llvm::json::Object moduleAttrs;
  for (NamedAttribute attr : module->getAttrs())
    if (auto text = dyn_cast<StringAttr>(attr.getValue()))
      moduleAttrs[attr.getName().getValue()] = text.getValue();
  return llvm::json::Object{{"format", "zshard-artifact"},
                            {"version", 1},
                            {"library", "step.so"},
                            {"entry", "zshard_step"},
                            {"signature", getSignatureHash(contract)},
                            {"ranks", 1},
                            {"grid", std::move(grid)},
                            {"module", std::move(moduleAttrs)},
                            {"arguments", std::move(arguments)},
                            {"results", std::move(results)},
                            {"units", llvm::json::Array()}};
}
