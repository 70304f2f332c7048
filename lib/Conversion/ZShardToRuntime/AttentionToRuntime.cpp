//===- AttentionToRuntime.cpp - --zshard-attention-to-runtime -------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// zshard.causal_attention and zshard.causal_attention_grad become calls of
/// the runtime's tiled attention kernels (zshard_rt_step_attention_fwd and
/// _bwd) on buffers, bridged to tensors with to_buffer / to_tensor so that
/// one-shot bufferization absorbs them.
///
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "ZShardToRuntime/RuntimeCalls.h"
#include "zshard/Dialect/ZShard/IR/ZShardContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_ATTENTIONTORUNTIME
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

constexpr StringLiteral kForward = "zshard_rt_step_attention_fwd";
constexpr StringLiteral kBackward = "zshard_rt_step_attention_bwd";

struct AttentionToRuntimePass
    : public mlir::zshard::impl::AttentionToRuntimeBase<
          AttentionToRuntimePass> {
  void runOnOperation() override;
};

/// Replaces `op` (operands `inputs`, all 4-D or 3-D f32 tensors) by a call
/// of `entry` with the sizes of q and k, the scale, the inputs' pointers and
/// those of fresh buffers for the results.
void lower(Operation *op, StringRef entry, ValueRange inputs, float scale) {
  auto module = op->getParentOfType<ModuleOp>();
  OpBuilder builder(op);
  Location loc = op->getLoc();
  Type i64 = builder.getI64Type(), f32 = builder.getF32Type();
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());

  ArrayRef<int64_t> q = cast<RankedTensorType>(inputs[0].getType()).getShape();
  ArrayRef<int64_t> k = cast<RankedTensorType>(inputs[1].getType()).getShape();
  SmallVector<Value> args;
  SmallVector<Type> types;
  for (int64_t size : {q[0], q[1], k[1], q[2], q[3]}) {
    args.push_back(arith::ConstantIntOp::create(builder, loc, i64, size));
    types.push_back(i64);
  }
  args.push_back(
      arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(scale))
          .getResult());
  types.push_back(f32);
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    auto buffer = bufferization::ToBufferOp::create(
        builder, loc, MemRefType::get(type.getShape(), type.getElementType()),
        input, /*read_only=*/true);
    args.push_back(getElementPointer(builder, loc, buffer));
    types.push_back(ptr);
  }
  SmallVector<Value> results;
  for (Value result : op->getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    auto buffer = memref::AllocOp::create(
        builder, loc, MemRefType::get(type.getShape(), type.getElementType()));
    buffer->setAttr(
        zshard::contract::kCategory,
        zshard::MemCategoryAttr::get(builder.getContext(),
                                     zshard::MemCategory::Activations));
    args.push_back(getElementPointer(builder, loc, buffer));
    types.push_back(ptr);
    results.push_back(buffer.getResult());
  }
  func::FuncOp callee = getOrDeclareRuntimeFunction(
      module, entry, builder.getFunctionType(types, {}));
  auto call = func::CallOp::create(builder, loc, callee, args);
  // The call keeps the op's annotations (module path, phase).
  for (NamedAttribute attr : op->getDiscardableAttrs())
    call->setAttr(attr.getName(), attr.getValue());
  for (auto [result, buffer] : llvm::zip(op->getResults(), results))
    result.replaceAllUsesWith(bufferization::ToTensorOp::create(
                                  builder, loc, result.getType(), buffer,
                                  /*restrict=*/true, /*writable=*/true)
                                  .getResult());
  op->erase();
}

} // namespace

void AttentionToRuntimePass::runOnOperation() {
  SmallVector<Operation *> ops;
  getOperation().walk([&](Operation *op) {
    if (isa<CausalAttentionOp, CausalAttentionGradOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    if (auto fwd = dyn_cast<CausalAttentionOp>(op))
      lower(op, kForward, op->getOperands(), fwd.getScale().convertToFloat());
    else
      lower(op, kBackward, op->getOperands(),
            cast<CausalAttentionGradOp>(op).getScale().convertToFloat());
  }
}
