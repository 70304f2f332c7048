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

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_ATTENTIONTORUNTIME
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

constexpr StringLiteral kForward = "zshard_rt_step_attention_strided_fwd";
constexpr StringLiteral kBackward = "zshard_rt_step_attention_strided_bwd";

struct AttentionToRuntimePass
    : public mlir::zshard::impl::AttentionToRuntimeBase<
          AttentionToRuntimePass> {
  void runOnOperation() override;
};

/// Where the elements of a statically shaped tensor lie in `root`, a tensor
/// read as a contiguous row-major buffer: element i at `offset` +
/// sum_d strides[d] * i[d] of root's elements.
struct StridedView {
  Value root;
  int64_t offset = 0;
  SmallVector<int64_t> strides;
};

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// A linalg op that only copies a tensor, permuting dimensions and shifting
/// them by constants: out[i] = source[i_dims[0].first + dims[0].second,
/// ...], source dimension j following output dimension dims[j].first.
struct PermutedCopy {
  Value source;
  SmallVector<std::pair<int64_t, int64_t>> dims;
};

/// `op` as a PermutedCopy: linalg.transpose; a generic whose body yields
/// its one input, read through a permutation with constant shifts (the
/// exporter's slices and transposes); or a generic without inputs whose
/// body yields tensor.extract of a tensor at the loop indices (the
/// exporter's slice at offset 0).
std::optional<PermutedCopy> permutedCopy(Operation *op) {
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    // out[i] = in[i'] with i'[perm[d]] = i[d].
    PermutedCopy copy{transpose.getInput(), {}};
    copy.dims.resize(transpose.getPermutation().size());
    for (auto [d, j] : llvm::enumerate(transpose.getPermutation()))
      copy.dims[j] = {int64_t(d), 0};
    return copy;
  }
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumDpsInputs() > 1 || generic.getNumReductionLoops() != 0 ||
      !generic.getIndexingMapsArray().back().isIdentity())
    return std::nullopt;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1)
    return std::nullopt;
  Value yielded = yield.getValues()[0];
  if (generic.getNumDpsInputs() == 0) {
    auto extract = yielded.getDefiningOp<tensor::ExtractOp>();
    if (!extract || extract->getBlock() != &body ||
        !extract.getTensor().getType().hasStaticShape())
      return std::nullopt;
    PermutedCopy copy{extract.getTensor(), {}};
    llvm::SmallBitVector used(generic.getNumLoops());
    for (Value index : extract.getIndices()) {
      auto loop = index.getDefiningOp<linalg::IndexOp>();
      if (!loop || used.test(loop.getDim()))
        return std::nullopt;
      used.set(loop.getDim());
      copy.dims.push_back({int64_t(loop.getDim()), 0});
    }
    if (!used.all())
      return std::nullopt;
    return copy;
  }
  if (body.getOperations().size() != 1 || yielded != body.getArgument(0))
    return std::nullopt;
  AffineMap map = generic.getIndexingMapsArray().front();
  PermutedCopy copy{generic.getDpsInputs()[0], {}};
  llvm::SmallBitVector used(map.getNumDims());
  for (AffineExpr expr : map.getResults()) {
    int64_t shift = 0;
    if (auto sum = dyn_cast<AffineBinaryOpExpr>(expr);
        sum && sum.getKind() == AffineExprKind::Add) {
      auto constant = dyn_cast<AffineConstantExpr>(sum.getRHS());
      if (!constant)
        return std::nullopt;
      shift = constant.getValue();
      expr = sum.getLHS();
    }
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || used.test(dim.getPosition()))
      return std::nullopt;
    used.set(dim.getPosition());
    copy.dims.push_back({int64_t(dim.getPosition()), shift});
  }
  if (!used.all())
    return std::nullopt;
  return copy;
}

/// `value` as a view of the tensor its copies and reshapes start from:
/// through permuted copies (the head split of attention) and expand /
/// collapse_shape, as far as the strides stay those of one buffer. The
/// value itself, contiguous, where nothing can be looked through.
StridedView viewOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  StridedView self{value, 0, rowMajorStrides(type.getShape())};
  Operation *def = value.getDefiningOp();
  if (!def || !type.hasStaticShape() ||
      llvm::any_of(def->getOperands(), [](Value operand) {
        auto tensor = dyn_cast<RankedTensorType>(operand.getType());
        return tensor && !tensor.hasStaticShape();
      }))
    return self;
  if (auto copy = permutedCopy(def)) {
    StridedView in = viewOf(copy->source);
    StridedView out{in.root, in.offset, SmallVector<int64_t>(type.getRank())};
    for (auto [j, dimAndShift] : llvm::enumerate(copy->dims)) {
      out.strides[dimAndShift.first] = in.strides[j];
      out.offset += dimAndShift.second * in.strides[j];
    }
    return out;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    StridedView in = viewOf(expand.getSrc());
    StridedView out{in.root, in.offset, SmallVector<int64_t>(type.getRank())};
    for (auto [j, group] : llvm::enumerate(expand.getReassociationIndices())) {
      int64_t stride = in.strides[j];
      for (int64_t d : llvm::reverse(group)) {
        out.strides[d] = stride;
        stride *= type.getDimSize(d);
      }
    }
    return out;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    StridedView in = viewOf(collapse.getSrc());
    ArrayRef<int64_t> sizes = collapse.getSrcType().getShape();
    StridedView out{in.root, in.offset, {}};
    for (const ReassociationIndices &group :
         collapse.getReassociationIndices()) {
      // The group's non-unit dimensions must nest contiguously.
      std::optional<int64_t> stride;
      int64_t next = 0;
      for (int64_t d : llvm::reverse(group)) {
        if (sizes[d] == 1)
          continue;
        if (stride && in.strides[d] != next)
          return self;
        if (!stride)
          stride = in.strides[d];
        next = in.strides[d] * sizes[d];
      }
      out.strides.push_back(stride.value_or(1));
    }
    return out;
  }
  return self;
}

/// The address of the first element of `tensor`, read in place through a
/// read-only, identity-layout `to_buffer`.
Value readOnlyPointer(OpBuilder &builder, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto buffer = bufferization::ToBufferOp::create(
      builder, loc, MemRefType::get(type.getShape(), type.getElementType()),
      tensor, /*read_only=*/true);
  return getElementPointer(builder, loc, buffer);
}

/// The call's arguments for one [batch, heads, seq, headDim] operand: the
/// address of its first element and its batch, head and seq strides. Reads
/// it in place where it is a strided view of another tensor with
/// contiguous rows.
void addOperand(OpBuilder &builder, Location loc, Value tensor,
                SmallVectorImpl<Value> &args) {
  StridedView view = viewOf(tensor);
  if (view.strides.back() != 1 || view.offset < 0 ||
      llvm::any_of(view.strides, [](int64_t s) { return s < 0; }))
    view = StridedView{
        tensor, 0,
        rowMajorStrides(cast<RankedTensorType>(tensor.getType()).getShape())};
  Value pointer = readOnlyPointer(builder, loc, view.root);
  Type i64 = builder.getI64Type();
  if (view.offset != 0) {
    Value offset = arith::ConstantIntOp::create(builder, loc, i64, view.offset);
    pointer = LLVM::GEPOp::create(
        builder, loc, pointer.getType(),
        cast<RankedTensorType>(view.root.getType()).getElementType(), pointer,
        ArrayRef<LLVM::GEPArg>{offset});
  }
  args.push_back(pointer);
  for (int64_t stride : ArrayRef(view.strides).drop_back())
    args.push_back(arith::ConstantIntOp::create(builder, loc, i64, stride));
}

/// A fresh buffer of `type` for results, charged to activations.
Value allocateResults(OpBuilder &builder, Location loc, RankedTensorType type) {
  auto buffer = memref::AllocOp::create(
      builder, loc, MemRefType::get(type.getShape(), type.getElementType()));
  buffer->setAttr(zshard::contract::kCategory,
                  zshard::MemCategoryAttr::get(
                      builder.getContext(), zshard::MemCategory::Activations));
  return buffer;
}

/// The address of a fresh buffer of `type` for a result, appended to the
/// call's arguments; the buffer is returned.
Value addResultBuffer(OpBuilder &builder, Location loc, RankedTensorType type,
                      SmallVectorImpl<Value> &args) {
  Value buffer = allocateResults(builder, loc, type);
  args.push_back(getElementPointer(builder, loc, buffer));
  return buffer;
}

/// A use of `result` ([batch, heads, seq, headDim]) that only swaps its
/// heads and seq dimensions (the heads' merge into [batch, seq, heads,
/// headDim]), if any.
Operation *headMerge(Value result) {
  using Dim = std::pair<int64_t, int64_t>;
  const SmallVector<Dim> swap = {{0, 0}, {2, 0}, {1, 0}, {3, 0}};
  for (Operation *user : result.getUsers()) {
    auto copy = permutedCopy(user);
    if (copy && copy->source == result && copy->dims == swap)
      return user;
  }
  return nullptr;
}

/// A [batch, heads, seq, headDim] result of the call: written straight into
/// the [batch, seq, heads, headDim] layout where a use merges the heads
/// (that use then reads the buffer, and the others a transpose of it, which
/// the grad's call looks through), else contiguous.
struct HeadsResult {
  Value buffer;
  Operation *merge = nullptr;
};

HeadsResult addHeadsResult(OpBuilder &builder, Location loc, Value result,
                           SmallVectorImpl<Value> &args) {
  auto type = cast<RankedTensorType>(result.getType());
  Operation *merge = headMerge(result);
  auto merged =
      merge ? cast<RankedTensorType>(merge->getResult(0).getType()) : type;
  Value buffer = addResultBuffer(builder, loc, merged, args);
  // The stride of batch, heads and seq in the buffer.
  SmallVector<int64_t> strides = rowMajorStrides(merged.getShape());
  if (merge)
    strides = {strides[0], strides[2], strides[1]};
  // addResultBuffer appended the pointer: the strides follow it.
  for (int64_t stride : ArrayRef(strides).take_front(3))
    args.push_back(arith::ConstantIntOp::create(builder, loc,
                                                builder.getI64Type(), stride));
  return {buffer, merge};
}

/// Replaces the uses of a heads result by the tensor of its buffer.
void replaceHeadsResult(OpBuilder &builder, Location loc, Value result,
                        const HeadsResult &written) {
  auto bufferType = cast<MemRefType>(written.buffer.getType());
  Value tensor = bufferization::ToTensorOp::create(
                     builder, loc,
                     RankedTensorType::get(bufferType.getShape(),
                                           bufferType.getElementType()),
                     written.buffer, /*restrict=*/true, /*writable=*/true)
                     .getResult();
  if (!written.merge) {
    result.replaceAllUsesWith(tensor);
    return;
  }
  written.merge->getResult(0).replaceAllUsesWith(tensor);
  written.merge->erase();
  if (result.use_empty())
    return;
  auto type = cast<RankedTensorType>(result.getType());
  Value init = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                       type.getElementType());
  result.replaceAllUsesWith(
      linalg::TransposeOp::create(builder, loc, tensor, init,
                                  ArrayRef<int64_t>{0, 2, 1, 3})
          ->getResult(0));
}

/// Results a chain of tensor.insert_slice ops puts side by side along the
/// last dimension of one fresh [batch, seq, width] tensor (the backward's
/// dq, dk and dv into the gradient of the fused q, k, v projection): each
/// result only merged into [batch, seq, heads, headDim], reshaped to
/// [batch, seq, heads * headDim] and inserted whole at column `columns[i]`
/// (the columns of the results apart), the chain starting at a
/// tensor.empty and each of its values but the first and the last only
/// extended by the next insert.
struct SideBySide {
  RankedTensorType type;
  SmallVector<int64_t> columns;
  /// The chain's last value, which the filled buffer replaces.
  Value whole;
  /// The inserts, the reshapes and the merges, users before producers.
  SmallVector<Operation *> replaced;
};

/// The value a single-use chain of reshapes from `value` ends at.
Value throughReshapes(Value value, SmallVectorImpl<Operation *> &ops) {
  while (value.hasOneUse()) {
    Operation *user = *value.getUsers().begin();
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user))
      break;
    ops.push_back(user);
    value = user->getResult(0);
  }
  return value;
}

std::optional<SideBySide> sideBySide(ResultRange results) {
  SideBySide found;
  SmallVector<Operation *> producers;
  SmallVector<int64_t> widths;
  DenseMap<Value, tensor::InsertSliceOp> insertInto;
  for (Value result : results) {
    Operation *merge = headMerge(result);
    if (!merge || !result.hasOneUse())
      return std::nullopt;
    producers.push_back(merge);
    Value merged = merge->getResult(0);
    ArrayRef<int64_t> heads =
        cast<RankedTensorType>(merged.getType()).getShape();
    Value rows = throughReshapes(merged, producers);
    auto rowsType = cast<RankedTensorType>(rows.getType());
    if (!rows.hasOneUse() ||
        rowsType.getShape() !=
            ArrayRef<int64_t>{heads[0], heads[1], heads[2] * heads[3]})
      return std::nullopt;
    auto insert = dyn_cast<tensor::InsertSliceOp>(*rows.getUsers().begin());
    if (!insert || insert.getSource() != rows || !insert.hasUnitStride() ||
        insert.getStaticSizes() != rowsType.getShape() ||
        insert.getDestType().getRank() != 3 ||
        insert.getDestType().getShape().take_front(2) !=
            rowsType.getShape().take_front(2))
      return std::nullopt;
    ArrayRef<int64_t> offsets = insert.getStaticOffsets();
    if (offsets[0] != 0 || offsets[1] != 0 || ShapedType::isDynamic(offsets[2]))
      return std::nullopt;
    found.columns.push_back(offsets[2]);
    widths.push_back(rowsType.getDimSize(2));
    if (!insertInto.try_emplace(insert.getDest(), insert).second)
      return std::nullopt;
  }
  // The kernel writes the results in its own order: their columns must not
  // overlap.
  for (size_t i = 0; i < widths.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (found.columns[i] < found.columns[j] + widths[j] &&
          found.columns[j] < found.columns[i] + widths[i])
        return std::nullopt;
  // One chain through all the inserts, from a tensor.empty (which CSE may
  // have shared with other uses).
  Value value;
  for (auto &[dest, insert] : insertInto)
    if (dest.getDefiningOp<tensor::EmptyOp>())
      value = dest;
  if (!value)
    return std::nullopt;
  SmallVector<Operation *> chain;
  while (auto insert = insertInto.lookup(value)) {
    if (!chain.empty() && !value.hasOneUse())
      return std::nullopt;
    chain.push_back(insert);
    value = insert.getResult();
  }
  if (chain.size() != insertInto.size())
    return std::nullopt;
  found.type = cast<RankedTensorType>(value.getType());
  found.whole = value;
  found.replaced.append(chain.rbegin(), chain.rend());
  found.replaced.append(producers.rbegin(), producers.rend());
  return found;
}

/// Calls `entry` with `args` in place of `op`, keeping its annotations
/// (module path, phase).
void emitCall(OpBuilder &builder, Operation *op, StringRef entry,
              ArrayRef<Value> args) {
  func::FuncOp callee = getOrDeclareRuntimeFunction(
      op->getParentOfType<ModuleOp>(), entry,
      builder.getFunctionType(ValueRange(args).getTypes(), {}));
  auto call = func::CallOp::create(builder, op->getLoc(), callee, args);
  for (NamedAttribute attr : op->getDiscardableAttrs())
    call->setAttr(attr.getName(), attr.getValue());
}

/// Replaces `op` by a call of `entry` with the sizes of q and k, the scale,
/// then each operand as addOperand passes it (lse: its address alone) and
/// each result's buffer; `heads` says which operands and results are
/// [batch, heads, seq, headDim].
void lower(Operation *op, StringRef entry, float scale,
           ArrayRef<bool> headsOperands, ArrayRef<bool> headsResults) {
  OpBuilder builder(op);
  Location loc = op->getLoc();
  Type i64 = builder.getI64Type();

  ValueRange inputs = op->getOperands();
  ArrayRef<int64_t> q = cast<RankedTensorType>(inputs[0].getType()).getShape();
  ArrayRef<int64_t> k = cast<RankedTensorType>(inputs[1].getType()).getShape();
  SmallVector<Value> args;
  for (int64_t size : {q[0], q[1], k[1], q[2], q[3]})
    args.push_back(arith::ConstantIntOp::create(builder, loc, i64, size));
  args.push_back(
      arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(scale))
          .getResult());
  for (auto [input, heads] : llvm::zip(inputs, headsOperands)) {
    if (heads)
      addOperand(builder, loc, input, args);
    else
      args.push_back(readOnlyPointer(builder, loc, input));
  }
  // Results side by side in one tensor: written into its buffer in place.
  std::optional<SideBySide> together;
  if (llvm::all_of(headsResults, [](bool heads) { return heads; }))
    together = sideBySide(op->getResults());
  if (together) {
    Value buffer = allocateResults(builder, loc, together->type);
    Value base = getElementPointer(builder, loc, buffer);
    ArrayRef<int64_t> shape = together->type.getShape();
    auto heads = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t headDim = heads.getDimSize(3);
    for (int64_t column : together->columns) {
      Value offset = arith::ConstantIntOp::create(builder, loc, i64, column);
      args.push_back(LLVM::GEPOp::create(builder, loc, base.getType(),
                                         together->type.getElementType(), base,
                                         ArrayRef<LLVM::GEPArg>{offset}));
      // Batch, head and seq strides in the [batch, seq, width] buffer.
      for (int64_t stride : {shape[1] * shape[2], headDim, shape[2]})
        args.push_back(arith::ConstantIntOp::create(builder, loc, i64, stride));
    }
    emitCall(builder, op, entry, args);
    together->whole.replaceAllUsesWith(bufferization::ToTensorOp::create(
        builder, loc, together->type, buffer, /*restrict=*/true,
        /*writable=*/true));
    for (Operation *replaced : together->replaced)
      replaced->erase();
    op->erase();
    return;
  }
  SmallVector<HeadsResult> results;
  for (auto [result, heads] : llvm::zip(op->getResults(), headsResults)) {
    if (heads) {
      results.push_back(addHeadsResult(builder, loc, result, args));
      continue;
    }
    results.push_back({addResultBuffer(
        builder, loc, cast<RankedTensorType>(result.getType()), args)});
  }
  emitCall(builder, op, entry, args);
  for (auto [result, written] : llvm::zip(op->getResults(), results))
    replaceHeadsResult(builder, loc, result, written);
  op->erase();
}

/// Erases the ops that computed `values` when nothing uses them any more,
/// and in turn their producers (the copies the calls read through).
void eraseDeadProducers(ArrayRef<Value> values) {
  llvm::SetVector<Operation *> worklist;
  for (Value value : values)
    if (Operation *def = value.getDefiningOp())
      worklist.insert(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.insert(def);
    op->erase();
  }
}

} // namespace

void AttentionToRuntimePass::runOnOperation() {
  SmallVector<CausalAttentionOp> forwards;
  SmallVector<CausalAttentionGradOp> backwards;
  getOperation().walk([&](Operation *op) {
    if (auto fwd = dyn_cast<CausalAttentionOp>(op))
      forwards.push_back(fwd);
    else if (auto bwd = dyn_cast<CausalAttentionGradOp>(op))
      backwards.push_back(bwd);
  });
  // The forwards first: the transposes they leave for the grads' uses of
  // out are looked through there.
  SmallVector<Value> read;
  for (CausalAttentionOp fwd : forwards) {
    llvm::append_range(read, fwd->getOperands());
    lower(fwd, kForward, fwd.getScale().convertToFloat(), {true, true, true},
          {true, false});
  }
  for (CausalAttentionGradOp bwd : backwards) {
    llvm::append_range(read, bwd->getOperands());
    lower(bwd, kBackward, bwd.getScale().convertToFloat(),
          {true, true, true, true, false, true}, {true, true, true});
  }
  eraseDeadProducers(read);
}
