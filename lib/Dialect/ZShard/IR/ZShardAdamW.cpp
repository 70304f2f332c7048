//===- ZShardAdamW.cpp - the zshard.adamw optimizer update ----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The result types and the verifier of `zshard.adamw`. Its arithmetic is
/// written once, in the zshard-lower-adamw pass.
///
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zshard;

LogicalResult AdamWOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getParam().getType());
  types.push_back(adaptor.getExpAvg().getType());
  types.push_back(adaptor.getExpAvgSq().getType());
  if (Value master = adaptor.getMaster())
    types.push_back(master.getType());
  return success();
}

LogicalResult AdamWOp::verify() {
  auto paramType = cast<RankedTensorType>(getParam().getType());
  auto isFloat = [](Value v) {
    return isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType());
  };
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"param", getParam()}, {"grad", getGrad()}})
    if (!isFloat(value))
      return emitOpError() << name
                           << " must have a floating-point element type, got "
                           << value.getType();
  SmallVector<std::pair<StringRef, Value>> shaped = {
      {"grad", getGrad()},
      {"exp_avg", getExpAvg()},
      {"exp_avg_sq", getExpAvgSq()}};
  if (Value master = getMaster())
    shaped.push_back({"master", master});
  for (auto [name, value] : shaped) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getShape() != paramType.getShape())
      return emitOpError() << name << " " << type
                           << " does not have the shape of param " << paramType;
    if (name != "grad" && !type.getElementType().isF32())
      return emitOpError() << name << " must be f32, got " << type;
  }
  struct Hyper {
    StringRef name;
    double value;
    bool belowOne;
  };
  for (Hyper h :
       {Hyper{"beta1", getBeta1().convertToDouble(), true},
        Hyper{"beta2", getBeta2().convertToDouble(), true},
        Hyper{"eps", getEps().convertToDouble(), false},
        Hyper{"weight_decay", getWeightDecay().convertToDouble(), false}})
    if (!std::isfinite(h.value) || h.value < 0 || (h.belowOne && h.value >= 1))
      return emitOpError() << h.name << " must be "
                           << (h.belowOne ? "in [0, 1)"
                                          : "a finite number >= 0")
                           << ", got " << h.value;
  return success();
}
