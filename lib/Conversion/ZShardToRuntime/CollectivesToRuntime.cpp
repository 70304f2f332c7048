//===- CollectivesToRuntime.cpp - --zshard-collectives-to-runtime ---------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// zshard collectives become calls of the runtime's zshard_rt_step_* entries
/// on buffers, bridged to tensors with to_buffer / to_tensor so that one-shot
/// bufferization absorbs them.
///
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "ZShardToRuntime/RuntimeCalls.h"
#include "zshard/Dialect/ZShard/IR/ZShardContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/abi/RuntimeCodes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_COLLECTIVESTORUNTIME
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// The runtime's zshard_rt_comm_dtype code of an element type.
std::optional<int32_t> getDTypeCode(Type type) {
  if (type.isF32())
    return ZSHARD_RT_COMM_F32;
  if (type.isBF16())
    return ZSHARD_RT_COMM_BF16;
  if (type.isF16())
    return ZSHARD_RT_COMM_F16;
  if (type.isSignlessInteger(32))
    return ZSHARD_RT_COMM_I32;
  return std::nullopt;
}

int32_t getReduceCode(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::Sum:
    return ZSHARD_RT_REDUCE_SUM;
  case ReduceKind::Avg:
    return ZSHARD_RT_REDUCE_AVG;
  case ReduceKind::Max:
    return ZSHARD_RT_REDUCE_MAX;
  }
  llvm_unreachable("unknown reduction");
}

StringRef getEntryName(CollectiveKind kind, bool async) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return async ? "zshard_rt_step_all_gather_start"
                 : "zshard_rt_step_all_gather";
  case CollectiveKind::ReduceScatter:
    return async ? "zshard_rt_step_reduce_scatter_start"
                 : "zshard_rt_step_reduce_scatter";
  case CollectiveKind::AllReduce:
    return async ? "zshard_rt_step_all_reduce_start"
                 : "zshard_rt_step_all_reduce";
  }
  llvm_unreachable("unknown collective");
}

struct CollectivesToRuntimePass
    : public mlir::zshard::impl::CollectivesToRuntimeBase<
          CollectivesToRuntimePass> {
  void runOnOperation() override;

  /// Emits the call of `op` before it; returns the destination buffer and,
  /// for a start op, the handle.
  FailureOr<std::pair<Value, Value>> emitCall(CollectiveOpInterface op);
};

} // namespace

FailureOr<std::pair<Value, Value>>
CollectivesToRuntimePass::emitCall(CollectiveOpInterface op) {
  ModuleOp module = getOperation();
  auto input = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType result = op.getResultTensorType();
  std::optional<int32_t> dtype = getDTypeCode(input.getElementType());
  if (!dtype || !input.hasStaticShape() || !result.hasStaticShape())
    return op->emitOpError() << "cannot run on the runtime: it takes static "
                                "f32, bf16, f16 or i32 tensors";
  int64_t mask = 0;
  for (int64_t axis : op.getGridAxes()) {
    if (axis >= 63)
      return op->emitOpError() << "grid axis " << axis << " is too large";
    mask |= int64_t(1) << axis;
  }
  CollectiveKind kind = op.getCollectiveKind();
  int64_t count = kind == CollectiveKind::AllGather ? input.getNumElements()
                                                    : result.getNumElements();

  OpBuilder builder(op);
  Location loc = op.getLoc();
  Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
  Type ptr = LLVM::LLVMPointerType::get(&getContext());
  auto src = bufferization::ToBufferOp::create(
      builder, loc, MemRefType::get(input.getShape(), input.getElementType()),
      op.getInput(), /*read_only=*/true);
  auto dst = memref::AllocOp::create(
      builder, loc,
      MemRefType::get(result.getShape(), result.getElementType()));
  // What the runtime charges the received buffer to (zshard-tag-allocations):
  // gathered units are communication buffers, reduced unit gradients are
  // gradients.
  zshard::MemCategory category =
      kind == CollectiveKind::AllGather ? zshard::MemCategory::Communication
      : op.getUnitAttr()                ? zshard::MemCategory::Gradients
                                        : zshard::MemCategory::Other;
  dst->setAttr(zshard::contract::kCategory,
               zshard::MemCategoryAttr::get(builder.getContext(), category));
  SmallVector<Value> args = {
      arith::ConstantIntOp::create(builder, loc, i64, mask),
      getElementPointer(builder, loc, src),
      getElementPointer(builder, loc, dst),
      arith::ConstantIntOp::create(builder, loc, i64, count),
      arith::ConstantIntOp::create(builder, loc, i32, *dtype)};
  SmallVector<Type> types = {i64, ptr, ptr, i64, i32};
  if (std::optional<ReduceKind> reduce = op.getReduceKindIfAny()) {
    args.push_back(arith::ConstantIntOp::create(builder, loc, i32,
                                                getReduceCode(*reduce)));
    types.push_back(i32);
  }
  // Name the collective by its unit for the runtime's traces: the unit's
  // index in the module, which is its index in the manifest.
  int32_t unitIndex = -1;
  if (FlatSymbolRefAttr unit = op.getUnitAttr())
    for (auto [i, candidate] : llvm::enumerate(module.getOps<UnitOp>()))
      if (candidate.getSymName() == unit.getValue())
        unitIndex = int32_t(i);
  func::FuncOp label = getOrDeclareRuntimeFunction(
      module, "zshard_rt_step_set_collective_unit",
      builder.getFunctionType({i32}, {}));
  func::CallOp::create(
      builder, loc, label,
      ValueRange{arith::ConstantIntOp::create(builder, loc, i32, unitIndex)});
  bool async = op.isAsync();
  func::FuncOp callee = getOrDeclareRuntimeFunction(
      module, getEntryName(kind, async),
      builder.getFunctionType(types, async ? TypeRange{i64} : TypeRange{}));
  auto call = func::CallOp::create(builder, loc, callee, args);
  return std::make_pair(Value(dst.getResult()),
                        async ? call.getResult(0) : Value());
}

void CollectivesToRuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<CollectiveOpInterface> collectives;
  module.walk([&](CollectiveOpInterface op) { collectives.push_back(op); });

  auto toTensor = [](OpBuilder &builder, Location loc, RankedTensorType type,
                     Value buffer) {
    return bufferization::ToTensorOp::create(builder, loc, type, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true)
        .getResult();
  };
  for (CollectiveOpInterface op : collectives) {
    FailureOr<std::pair<Value, Value>> emitted = emitCall(op);
    if (failed(emitted))
      return signalPassFailure();
    auto [buffer, handle] = *emitted;
    RankedTensorType resultType = op.getResultTensorType();
    if (!op.isAsync()) {
      OpBuilder builder(op);
      op->getResult(0).replaceAllUsesWith(
          toTensor(builder, op.getLoc(), resultType, buffer));
      op->erase();
      continue;
    }
    // The verifier guarantees exactly one wait consumes the token.
    auto wait = cast<WaitOp>(*op->getResult(0).getUsers().begin());
    OpBuilder builder(wait);
    Builder b(&getContext());
    func::FuncOp waitFn = getOrDeclareRuntimeFunction(
        module, "zshard_rt_step_wait", b.getFunctionType({b.getI64Type()}, {}));
    func::CallOp::create(builder, wait.getLoc(), waitFn, handle);
    wait.getResult().replaceAllUsesWith(
        toTensor(builder, wait.getLoc(), resultType, buffer));
    wait.erase();
    op->erase();
  }
  // The rank's coordinate: 0 on an axis of size 1, else asked of the runtime.
  SmallVector<shard::ProcessMultiIndexOp> coords;
  module.walk([&](shard::ProcessMultiIndexOp op) { coords.push_back(op); });
  for (shard::ProcessMultiIndexOp op : coords) {
    OpBuilder builder(op);
    Location loc = op.getLoc();
    auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        op, op.getGridAttr());
    SmallVector<Value> results;
    for (int16_t axis : op.getAxes()) {
      if (grid && grid.getShape()[axis] == 1) {
        results.push_back(arith::ConstantIndexOp::create(builder, loc, 0));
        continue;
      }
      Builder b(&getContext());
      func::FuncOp coord = getOrDeclareRuntimeFunction(
          module, kGridCoordFn,
          b.getFunctionType({b.getI32Type()}, {b.getI64Type()}));
      Value axisValue =
          arith::ConstantIntOp::create(builder, loc, b.getI32Type(), axis);
      auto call = func::CallOp::create(builder, loc, coord, axisValue);
      // The axis size, where static, bounds the coordinate for analyses of
      // the bufferized step (zshard-update-in-place).
      if (grid && !ShapedType::isDynamic(grid.getShape()[axis]))
        call->setAttr(kAxisSizeAttr,
                      b.getI64IntegerAttr(grid.getShape()[axis]));
      Value value = call.getResult(0);
      results.push_back(arith::IndexCastOp::create(
          builder, loc, builder.getIndexType(), value));
    }
    op->replaceAllUsesWith(results);
    op->erase();
  }
  module.walk([](ReleaseOp release) { release.erase(); });
  for (UnitOp unit : llvm::make_early_inc_range(module.getOps<UnitOp>()))
    unit.erase();
  for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
    if (SymbolTable::symbolKnownUseEmpty(grid, module))
      grid.erase();
}
