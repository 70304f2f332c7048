//===- ZShardAttention.cpp - zshard.causal_attention and its grad ---------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Result types and verifiers of `zshard.causal_attention` and
/// `zshard.causal_attention_grad`. The arithmetic is the runtime's
/// (runtime/lib/cpu/FlashAttention.cpp, runtime/lib/cuda/FlashAttention.cu).
///
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zshard;

namespace {

RankedTensorType lseType(RankedTensorType q) {
  ArrayRef<int64_t> s = q.getShape();
  return RankedTensorType::get({s[0], s[1], s[2]}, q.getElementType());
}

/// The checks both ops share: static shapes, k and v alike, batch, sequence
/// and head size of q, a number of kv heads dividing the heads, and a
/// finite positive scale.
LogicalResult verifyOperands(Operation *op, Value q, Value k, Value v,
                             float scale) {
  auto qt = cast<RankedTensorType>(q.getType());
  auto kt = cast<RankedTensorType>(k.getType());
  auto vt = cast<RankedTensorType>(v.getType());
  for (auto [name, type] :
       {std::pair<StringRef, RankedTensorType>{"q", qt}, {"k", kt}, {"v", vt}})
    if (!type.hasStaticShape())
      return op->emitOpError()
             << name << " must have a static shape, got " << type;
  if (kt != vt)
    return op->emitOpError()
           << "k " << kt << " and v " << vt << " must have the same type";
  ArrayRef<int64_t> qs = qt.getShape(), ks = kt.getShape();
  if (qs[0] != ks[0] || qs[2] != ks[2] || qs[3] != ks[3])
    return op->emitOpError()
           << "k " << kt << " must have the batch, sequence and head size of q "
           << qt;
  if (ks[1] <= 0 || qs[1] % ks[1] != 0)
    return op->emitOpError() << "the " << qs[1] << " heads of q must be a "
                             << "multiple of the " << ks[1] << " kv heads";
  if (!std::isfinite(scale) || scale <= 0)
    return op->emitOpError()
           << "scale must be finite and positive, got " << scale;
  return success();
}

} // namespace

LogicalResult
CausalAttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  auto q = cast<RankedTensorType>(adaptor.getQ().getType());
  types.push_back(q);
  types.push_back(lseType(q));
  return success();
}

LogicalResult CausalAttentionOp::verify() {
  return verifyOperands(*this, getQ(), getK(), getV(),
                        getScale().convertToFloat());
}

LogicalResult
CausalAttentionGradOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getQ().getType());
  types.push_back(adaptor.getK().getType());
  types.push_back(adaptor.getV().getType());
  return success();
}

LogicalResult CausalAttentionGradOp::verify() {
  if (failed(verifyOperands(*this, getQ(), getK(), getV(),
                            getScale().convertToFloat())))
    return failure();
  auto qt = cast<RankedTensorType>(getQ().getType());
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"out", getOut()}, {"dout", getDout()}})
    if (value.getType() != qt)
      return emitOpError() << name << " " << value.getType()
                           << " must have the type of q " << qt;
  if (getLse().getType() != lseType(qt))
    return emitOpError() << "lse " << getLse().getType() << " must be "
                         << lseType(qt);
  return success();
}
