//===- MatmulToRuntime.cpp - --zshard-matmul-to-runtime -------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Replaces f32 (and bf16 x bf16 -> f32) linalg.matmul / linalg.batch_matmul
/// on memrefs by calls of the runtime's batched sgemm (gemm_bf16), folding
/// operand transposes (from indexing maps or from column-major storage) into
/// the BLAS transpose flags, and the zero-fill of a fresh output into the
/// product (BLAS's beta 0: C is written once, not zeroed, read and written).
///
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "ZShardToRuntime/RuntimeCalls.h"
#include "zshard/Analysis/MemoryPlan.h"
#include "zshard/Support/ViewRoot.h"
#include "zshard/abi/RuntimeCodes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_MATMULTORUNTIME
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

constexpr StringLiteral kSgemm = "zshard_rt_step_sgemm";
constexpr StringLiteral kSgemmBias = "zshard_rt_step_sgemm_bias";
constexpr StringLiteral kSgemmBiasAdd = "zshard_rt_step_sgemm_bias_add";
constexpr StringLiteral kGemmBF16 = "zshard_rt_step_gemm_bf16";

/// How one operand is handed to BLAS.
struct MatrixOperand {
  Value memref;
  bool transpose = false;
  int64_t leadingDim = 0;
  int64_t batchStride = 0;
};

/// Describes `value`, a memref of `elementType` and rank 2 (or 3 with a
/// leading batch dimension), as a BLAS operand. `mapTranspose` says whether
/// the op reads it transposed. Fails unless its strides are static and one
/// of the two matrix dimensions is contiguous.
FailureOr<MatrixOperand> describeOperand(Value value, Type elementType,
                                         bool hasBatch, bool mapTranspose) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getElementType() != elementType || !type.hasStaticShape())
    return failure();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return failure();
  ArrayRef<int64_t> shape = type.getShape();
  unsigned first = hasBatch ? 1 : 0;
  int64_t rows = shape[first], cols = shape[first + 1];
  int64_t rowStride = strides[first], colStride = strides[first + 1];

  MatrixOperand operand;
  operand.memref = value;
  operand.batchStride = hasBatch ? strides[0] : 0;
  bool columnMajor;
  if (colStride == 1 || cols == 1)
    columnMajor = false;
  else if (rowStride == 1 || rows == 1)
    columnMajor = true;
  else
    return failure();
  // The stored matrix, read row-major: `storedRows` lines of `storedCols`.
  int64_t storedRows = columnMajor ? cols : rows;
  int64_t storedCols = columnMajor ? rows : cols;
  int64_t ld = columnMajor ? colStride : rowStride;
  if (storedRows == 1)
    ld = std::max(ld, storedCols);
  if (ld < storedCols)
    return failure();
  operand.leadingDim = ld;
  operand.transpose = mapTranspose != columnMajor;
  return operand;
}

/// The maps of a (batch) matmul: whether A and B are read transposed.
/// Dimensions are (m, n, k), or (b, m, n, k) with a batch.
FailureOr<std::pair<bool, bool>> classifyMaps(linalg::LinalgOp op,
                                              bool hasBatch) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3)
    return failure();
  MLIRContext *ctx = op->getContext();
  unsigned b = 0, base = hasBatch ? 1 : 0;
  unsigned nDims = base + 3;
  auto dims = [&](ArrayRef<unsigned> positions) {
    SmallVector<AffineExpr> exprs;
    for (unsigned p : positions)
      exprs.push_back(getAffineDimExpr(p, ctx));
    return AffineMap::get(nDims, 0, exprs, ctx);
  };
  unsigned m = base, n = base + 1, k = base + 2;
  auto withBatch = [&](std::initializer_list<unsigned> rest) {
    SmallVector<unsigned> all;
    if (hasBatch)
      all.push_back(b);
    all.append(rest.begin(), rest.end());
    return dims(all);
  };
  if (maps[2] != withBatch({m, n}))
    return failure();
  bool transA, transB;
  if (maps[0] == withBatch({m, k}))
    transA = false;
  else if (maps[0] == withBatch({k, m}))
    transA = true;
  else
    return failure();
  if (maps[1] == withBatch({k, n}))
    transB = false;
  else if (maps[1] == withBatch({n, k}))
    transB = true;
  else
    return failure();
  return std::make_pair(transA, transB);
}

/// Whether `op` leaves memory as it is: no effects, or only allocations.
bool touchesNoMemory(Operation *op) {
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || op->getNumRegions() != 0)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::all_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect());
  });
}

/// The zero-fill the product `op` (C += A B) can take over, so that it
/// computes C = A B instead: a linalg.fill of a float zero into exactly `c`,
/// earlier in `op`'s block with only ops that touch no memory in between,
/// where `c` views an allocation of the step that neither `a` nor `b` views
/// (so the fill changes nothing the product reads). Null when there is none.
linalg::FillOp findFoldableZeroFill(Operation *op, Value a, Value b, Value c) {
  Value root = mlir::zshard::getViewRoot(c);
  if (!root.getDefiningOp<memref::AllocOp>() &&
      !root.getDefiningOp<memref::AllocaOp>())
    return {};
  if (mlir::zshard::getViewRoot(a) == root ||
      mlir::zshard::getViewRoot(b) == root)
    return {};
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.hasPureBufferSemantics() &&
        fill.getDpsInitOperand(0)->get() == c)
      return matchPattern(fill.getDpsInputOperand(0)->get(), m_AnyZeroFloat())
                 ? fill
                 : linalg::FillOp();
    if (!touchesNoMemory(prev))
      return {};
  }
  return {};
}

/// Whether `op` is the call that sets the category of the next allocation
/// (zshard-tag-allocations).
bool isSetAllocCategory(Operation *op) {
  auto call = dyn_cast_or_null<func::CallOp>(op);
  return call && call.getCallee() == mlir::zshard::kSetAllocCategoryFn;
}

/// Whether the ops strictly between `from` and `to` (later in the same
/// block) touch no memory, only allocate, or set the next allocation's
/// category: a call at `to` sees the memory `from` saw.
bool onlyMemoryFreeBetween(Operation *from, Operation *to) {
  for (Operation *between = from->getNextNode(); between != to;
       between = between->getNextNode())
    if (!touchesNoMemory(between) && !isSetAllocCategory(between))
      return false;
  return true;
}

/// Whether `add`'s body yields the sum of its two inputs' elements.
bool addsItsTwoInputs(linalg::GenericOp add) {
  Block &body = add.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto sum = yield.getValues().size() == 1
                 ? yield.getValues()[0].getDefiningOp<arith::AddFOp>()
                 : arith::AddFOp();
  return sum && body.getOperations().size() == 2 &&
         llvm::is_contained(ValueRange{sum.getLhs(), sum.getRhs()},
                            body.getArgument(0)) &&
         llvm::is_contained(ValueRange{sum.getLhs(), sum.getRhs()},
                            body.getArgument(1));
}

/// A bias add the product C = A B can take over: out = C + bias, bias a
/// vector of C's columns added to every row.
struct BiasAdd {
  linalg::GenericOp op;
  Value bias, out;
};

/// The bias add that reads `c`, the fresh 2-D allocation the product `op`
/// writes (its zero-fill folded): a linalg.generic adding `c` (identity
/// map) and a contiguous f32 vector (map (d0, d1) -> (d1)) into a third
/// memref that neither `a`, `b` nor the vector views, after `op` in its
/// block with only ops that touch no memory, or set the next allocation's
/// category, in between; `c` read by nothing else. None when there is none.
std::optional<BiasAdd> findBiasAdd(Operation *op, Value a, Value b, Value c,
                                   linalg::FillOp zeroFill) {
  if (!c.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  linalg::GenericOp add;
  for (Operation *user : c.getUsers()) {
    if (user == op || user == zeroFill)
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || add)
      return std::nullopt;
    add = generic;
  }
  if (!add || add->getBlock() != op->getBlock() || !op->isBeforeInBlock(add) ||
      !add.hasPureBufferSemantics() || add.getNumDpsInputs() != 2 ||
      add.getNumDpsInits() != 1 || add.getNumLoops() != 2 ||
      add.getNumParallelLoops() != 2)
    return std::nullopt;
  // out = in0 + in1, one of them c.
  if (!onlyMemoryFreeBetween(op, add) || !addsItsTwoInputs(add))
    return std::nullopt;
  unsigned cIndex = add.getDpsInputOperand(0)->get() == c ? 0 : 1;
  Value bias = add.getDpsInputOperand(1 - cIndex)->get();
  SmallVector<AffineMap> maps = add.getIndexingMapsArray();
  MLIRContext *ctx = op->getContext();
  AffineMap columns = AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx);
  auto biasType = dyn_cast<MemRefType>(bias.getType());
  if (add.getDpsInputOperand(cIndex)->get() != c ||
      !maps[cIndex].isIdentity() || maps[1 - cIndex] != columns ||
      !maps[2].isIdentity() || !biasType || biasType.getRank() != 1 ||
      !biasType.getElementType().isF32() || !biasType.getLayout().isIdentity())
    return std::nullopt;
  Value out = add.getDpsInitOperand(0)->get();
  Value outRoot = mlir::zshard::getViewRoot(out);
  for (Value read : {a, b, bias})
    if (mlir::zshard::getViewRoot(read) == outRoot)
      return std::nullopt;
  return BiasAdd{add, bias, out};
}

/// A residual add that reads a bias add's output: out = (the bias add's
/// output) + addend, elementwise, both contiguous with the output's
/// elements.
struct ResidualAdd {
  linalg::GenericOp op;
  Value addend, out;
  /// The views of the bias add's output the residual add reads it through.
  SmallVector<Operation *> views;
};

/// Whether `value` is an f32 memref of `elements` elements with contiguous
/// rows of `n` (identity layout, static shape, innermost dimension n).
bool isContiguousRows(Value value, int64_t elements, int64_t n) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getElementType().isF32() &&
         type.getLayout().isIdentity() && type.hasStaticShape() &&
         type.getRank() >= 1 && type.getNumElements() == elements &&
         type.getShape().back() == n;
}

/// The residual add that reads `bias`'s output, the fresh m x n allocation
/// it writes: a linalg.generic adding that output (or a reshape of it) and
/// another memref `addend` into a third, identity maps, all loops parallel,
/// after the bias add in its block with only ops that touch no memory,
/// allocate, reshape or set the next allocation's category in between; the
/// output read by nothing else; the addend and the residual add's output
/// contiguous rows of n, neither a view of the other nor the output one of
/// `a`, `b` or the bias. None when there is none.
std::optional<ResidualAdd> findResidualAdd(const BiasAdd &bias, Value a,
                                           Value b, int64_t m, int64_t n) {
  if (!bias.out.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  ResidualAdd found;
  linalg::GenericOp add;
  SmallVector<Value> reads = {bias.out};
  while (!reads.empty()) {
    Value read = reads.pop_back_val();
    for (Operation *user : read.getUsers()) {
      if (user == bias.op)
        continue;
      if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user)) {
        found.views.push_back(user);
        reads.push_back(user->getResult(0));
        continue;
      }
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!generic || (add && generic != add))
        return std::nullopt;
      add = generic;
    }
  }
  if (!add || add->getBlock() != bias.op->getBlock() ||
      !bias.op->isBeforeInBlock(add) || !add.hasPureBufferSemantics() ||
      add.getNumDpsInputs() != 2 || add.getNumDpsInits() != 1 ||
      add.getNumParallelLoops() != add.getNumLoops() ||
      !llvm::all_of(add.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      !onlyMemoryFreeBetween(bias.op, add) || !addsItsTwoInputs(add))
    return std::nullopt;
  Value outRoot = mlir::zshard::getViewRoot(bias.out);
  unsigned outIndex =
      mlir::zshard::getViewRoot(add.getDpsInputOperand(0)->get()) == outRoot
          ? 0
          : 1;
  found.op = add;
  found.addend = add.getDpsInputOperand(1 - outIndex)->get();
  found.out = add.getDpsInitOperand(0)->get();
  if (mlir::zshard::getViewRoot(add.getDpsInputOperand(outIndex)->get()) !=
          outRoot ||
      !isContiguousRows(found.addend, m * n, n) ||
      !isContiguousRows(found.out, m * n, n))
    return std::nullopt;
  // The addend is read while the call writes the output, and must outlive
  // the bias add's output, which goes.
  if (mlir::zshard::getViewRoot(found.addend) == outRoot)
    return std::nullopt;
  Value resultRoot = mlir::zshard::getViewRoot(found.out);
  for (Value read : {a, b, bias.bias, found.addend, bias.out})
    if (mlir::zshard::getViewRoot(read) == resultRoot)
      return std::nullopt;
  return found;
}

/// Erases `alloc`, unused now, and the category call zshard-tag-allocations
/// put before it (with its constant when nothing else reads it).
void eraseAllocation(memref::AllocOp alloc) {
  Operation *prev = alloc->getPrevNode();
  alloc->erase();
  if (!isSetAllocCategory(prev))
    return;
  Operation *code = prev->getOperand(0).getDefiningOp();
  prev->erase();
  if (code && code->use_empty() && isMemoryEffectFree(code))
    code->erase();
}

/// The declaration of runtime gemm entry `name`: the transposes, sizes, and
/// each operand's address, leading dimension and batch stride, then `tail`
/// (sgemm and gemm_bf16: whether the product accumulates into C, an i32;
/// sgemm_bias: the bias's address; sgemm_bias_add: it, then D's address,
/// leading dimension and batch stride).
func::FuncOp getOrDeclareGemm(ModuleOp module, StringRef name, TypeRange tail) {
  Builder b(module.getContext());
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Type> inputs = {i32, i32, i64, i64, i64, i64, ptr, i64,
                              i64, ptr, i64, i64, ptr, i64, i64};
  llvm::append_range(inputs, tail);
  return mlir::zshard::getOrDeclareRuntimeFunction(
      module, name, b.getFunctionType(inputs, {}));
}

struct MatmulToRuntimePass
    : public mlir::zshard::impl::MatmulToRuntimeBase<MatmulToRuntimePass> {
  using MatmulToRuntimeBase::MatmulToRuntimeBase;
  void runOnOperation() override;
  LogicalResult convert(linalg::LinalgOp op, bool hasBatch);
};

} // namespace

LogicalResult MatmulToRuntimePass::convert(linalg::LinalgOp op, bool hasBatch) {
  if (!op.hasPureBufferSemantics())
    return failure();
  FailureOr<std::pair<bool, bool>> maps = classifyMaps(op, hasBatch);
  if (failed(maps))
    return failure();
  Value a = op.getDpsInputOperand(0)->get();
  Value b = op.getDpsInputOperand(1)->get();
  Value c = op.getDpsInitOperand(0)->get();
  // f32 x f32 -> f32 (sgemm) or bf16 x bf16 -> f32 (gemm_bf16).
  auto aType = dyn_cast<MemRefType>(a.getType());
  if (!aType)
    return failure();
  Type inputType = aType.getElementType();
  if (!inputType.isF32() && !inputType.isBF16())
    return failure();
  Type f32 = Float32Type::get(op->getContext());
  FailureOr<MatrixOperand> opA =
      describeOperand(a, inputType, hasBatch, maps->first);
  FailureOr<MatrixOperand> opB =
      describeOperand(b, inputType, hasBatch, maps->second);
  FailureOr<MatrixOperand> opC = describeOperand(c, f32, hasBatch, false);
  if (failed(opA) || failed(opB) || failed(opC) || opC->transpose)
    return failure();

  ArrayRef<int64_t> cShape = cast<MemRefType>(c.getType()).getShape();
  ArrayRef<int64_t> aShape = cast<MemRefType>(a.getType()).getShape();
  unsigned base = hasBatch ? 1 : 0;
  int64_t batch = hasBatch ? cShape[0] : 1;
  int64_t m = cShape[base], n = cShape[base + 1];
  int64_t k = maps->first ? aShape[base] : aShape[base + 1];

  // C = 0 followed by C += A B is C = A B.
  linalg::FillOp zeroFill =
      k > 0 ? findFoldableZeroFill(op, a, b, c) : linalg::FillOp();
  // C = A B followed by D = C + bias is D = A B + bias.
  std::optional<BiasAdd> biasAdd;
  if (fuseBias && zeroFill && !hasBatch && inputType.isF32())
    biasAdd = findBiasAdd(op, a, b, c, zeroFill);
  if (biasAdd) {
    // The call writes the add's output instead of C.
    FailureOr<MatrixOperand> opOut =
        describeOperand(biasAdd->out, f32, false, false);
    if (succeeded(opOut) && !opOut->transpose)
      opC = opOut;
    else
      biasAdd.reset();
  }
  // D = A B + bias followed by R = D + X is R = A B + bias + X.
  std::optional<ResidualAdd> residual;
  if (biasAdd)
    residual = findResidualAdd(*biasAdd, a, b, m, n);
  if (residual)
    opC = MatrixOperand{residual->out, false, n, 0};

  // With a bias add (and a residual add) taken over, the call replaces the
  // last of them: A and B are as they were at the product (nothing between
  // touches memory), and the output exists there.
  Operation *at = op;
  if (residual)
    at = residual->op;
  else if (biasAdd)
    at = biasAdd->op;
  OpBuilder builder(at);
  Location loc = op.getLoc();
  // One constant per distinct value keeps the call readable.
  llvm::DenseMap<std::pair<Type, int64_t>, Value> constants;
  auto constant = [&](Type type, int64_t v) -> Value {
    Value &slot = constants[{type, v}];
    if (!slot)
      slot = arith::ConstantIntOp::create(builder, loc, type, v);
    return slot;
  };
  auto i64 = [&](int64_t v) { return constant(builder.getI64Type(), v); };
  auto i32 = [&](bool transpose) {
    return constant(builder.getI32Type(),
                    transpose ? ZSHARD_RT_TRANS : ZSHARD_RT_NO_TRANS);
  };
  SmallVector<Value> args = {
      i32(opA->transpose),
      i32(opB->transpose),
      i64(batch),
      i64(m),
      i64(n),
      i64(k),
      mlir::zshard::getElementPointer(builder, loc, a),
      i64(opA->leadingDim),
      i64(opA->batchStride),
      mlir::zshard::getElementPointer(builder, loc, b),
      i64(opB->leadingDim),
      i64(opB->batchStride),
      mlir::zshard::getElementPointer(builder, loc, opC->memref),
      i64(opC->leadingDim),
      i64(opC->batchStride)};
  // The entry's own arguments after the three operands'.
  size_t common = args.size();
  StringRef entry = inputType.isBF16() ? kGemmBF16 : kSgemm;
  if (biasAdd) {
    entry = kSgemmBias;
    args.push_back(
        mlir::zshard::getElementPointer(builder, loc, biasAdd->bias));
  } else {
    args.push_back(constant(builder.getI32Type(), zeroFill ? 0 : 1));
  }
  if (residual) {
    entry = kSgemmBiasAdd;
    args.push_back(
        mlir::zshard::getElementPointer(builder, loc, residual->addend));
    args.push_back(i64(n));
    args.push_back(i64(0));
  }
  func::CallOp::create(
      builder, loc,
      getOrDeclareGemm(getOperation(), entry,
                       ValueRange(args).drop_front(common).getTypes()),
      args);
  if (residual) {
    residual->op->erase();
    for (Operation *view : llvm::reverse(residual->views))
      view->erase();
    ++numFusedResiduals;
  }
  if (biasAdd) {
    biasAdd->op->erase();
    ++numFusedBiases;
  }
  // The bias add's output is unused once the residual add took its place.
  if (residual)
    eraseAllocation(biasAdd->out.getDefiningOp<memref::AllocOp>());
  op->erase();
  if (zeroFill) {
    zeroFill->erase();
    ++numFoldedFills;
  }
  // The product's own output is unused once the bias add took its place.
  if (biasAdd)
    eraseAllocation(c.getDefiningOp<memref::AllocOp>());
  return success();
}

void MatmulToRuntimePass::runOnOperation() {
  SmallVector<std::pair<linalg::LinalgOp, bool>> candidates;
  getOperation().walk([&](Operation *op) {
    if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
      candidates.push_back({cast<linalg::LinalgOp>(op), false});
    else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(op))
      candidates.push_back({cast<linalg::LinalgOp>(op), true});
  });
  for (auto [op, hasBatch] : candidates) {
    if (succeeded(convert(op, hasBatch)))
      ++numConverted;
    else
      ++numKept;
  }
}
