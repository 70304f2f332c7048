//===- StepBuilder.cpp - op helpers for generated training steps ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/StepBuilder.h"
#include "zshard/Analysis/ModulePaths.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/Support/ErrorHandling.h"

#include <limits>

using namespace mlir;
using namespace ::zshard::gen;

//===----------------------------------------------------------------------===//
// BodyBuilder
//===----------------------------------------------------------------------===//

Value BodyBuilder::cst(double value) {
  return cstF32(static_cast<float>(value));
}

Value BodyBuilder::cstF32(float value) {
  return arith::ConstantOp::create(builder, loc,
                                   builder.getF32FloatAttr(value));
}

Value BodyBuilder::add(Value a, Value b) {
  return arith::AddFOp::create(builder, loc, a, b);
}
Value BodyBuilder::sub(Value a, Value b) {
  return arith::SubFOp::create(builder, loc, a, b);
}
Value BodyBuilder::mul(Value a, Value b) {
  return arith::MulFOp::create(builder, loc, a, b);
}
Value BodyBuilder::div(Value a, Value b) {
  return arith::DivFOp::create(builder, loc, a, b);
}
Value BodyBuilder::max(Value a, Value b) {
  return arith::MaximumFOp::create(builder, loc, a, b);
}
Value BodyBuilder::min(Value a, Value b) {
  return arith::MinimumFOp::create(builder, loc, a, b);
}
Value BodyBuilder::exp(Value a) { return math::ExpOp::create(builder, loc, a); }
Value BodyBuilder::log(Value a) { return math::LogOp::create(builder, loc, a); }
Value BodyBuilder::tanh(Value a) {
  return math::TanhOp::create(builder, loc, a);
}
Value BodyBuilder::sqrt(Value a) {
  return math::SqrtOp::create(builder, loc, a);
}
Value BodyBuilder::powf(Value a, Value b) {
  return math::PowFOp::create(builder, loc, a, b);
}
Value BodyBuilder::select(Value cond, Value a, Value b) {
  return arith::SelectOp::create(builder, loc, cond, a, b);
}

Value BodyBuilder::loopIndex(unsigned dim) {
  return linalg::IndexOp::create(builder, loc, dim);
}
Value BodyBuilder::indexCst(int64_t value) {
  return arith::ConstantIndexOp::create(builder, loc, value);
}
Value BodyBuilder::toIndex(Value integer) {
  return arith::IndexCastOp::create(builder, loc, builder.getIndexType(),
                                    integer);
}
Value BodyBuilder::cmpIndex(arith::CmpIPredicate pred, Value a, Value b) {
  return arith::CmpIOp::create(builder, loc, pred, a, b);
}
Value BodyBuilder::extract(Value tensor, ValueRange indices) {
  Value v = tensor::ExtractOp::create(builder, loc, tensor, indices);
  if (isa<FloatType>(v.getType()) && !v.getType().isF32())
    v = arith::ExtFOp::create(builder, loc, builder.getF32Type(), v);
  return v;
}

//===----------------------------------------------------------------------===//
// StepBuilder
//===----------------------------------------------------------------------===//

StepBuilder::StepBuilder(ImplicitLocOpBuilder &builder, DType dtype)
    : b(builder), dt(dtype) {
  f32Type = b.getF32Type();
  i32Type = b.getI32Type();
  actType = dtype == DType::BF16 ? Type(b.getBF16Type()) : f32Type;
  stamper = std::make_unique<mlir::zshard::ModulePathStamper>();
  b.setListener(stamper.get());
}

StepBuilder::~StepBuilder() { b.setListener(nullptr); }

std::string StepBuilder::getPath() const {
  return static_cast<mlir::zshard::ModulePathStamper &>(*stamper)
      .getPath()
      .str();
}

void StepBuilder::setPath(StringRef path) {
  static_cast<mlir::zshard::ModulePathStamper &>(*stamper).setPath(path);
}

Location StepBuilder::pathLoc(StringRef path) {
  return NameLoc::get(b.getStringAttr(path));
}

StepBuilder::PathScope::PathScope(StepBuilder &sb, StringRef path)
    : sb(sb), saved(sb.b.getLoc()), savedPath(sb.getPath()) {
  sb.b.setLoc(sb.pathLoc(path));
  sb.setPath(path);
}

StepBuilder::PathScope::~PathScope() {
  sb.b.setLoc(saved);
  sb.setPath(savedPath);
}

SmallVector<int64_t> StepBuilder::shapeOf(Value v) {
  return llvm::to_vector(cast<RankedTensorType>(v.getType()).getShape());
}

Type StepBuilder::elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

RankedTensorType StepBuilder::tensorType(ArrayRef<int64_t> shape, Type elt) {
  // The configuration checks bound every shape the models build; this is the
  // backstop that keeps an unchecked shape from reaching MLIR.
  int64_t n = 1;
  for (int64_t extent : shape)
    if (extent <= 0 || __builtin_mul_overflow(n, extent, &n))
      llvm::report_fatal_error("zshard-gen: internal error: bad tensor shape",
                               /*gen_crash_diag=*/false);
  return RankedTensorType::get(shape, elt);
}

AffineMap StepBuilder::identity(unsigned rank) {
  return AffineMap::getMultiDimIdentityMap(rank, context());
}

AffineMap StepBuilder::project(unsigned rank, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i : dims)
    exprs.push_back(getAffineDimExpr(i, context()));
  return AffineMap::get(rank, 0, exprs, context());
}

AffineMap StepBuilder::affineMap(unsigned rank, ArrayRef<AffineExpr> exprs) {
  return AffineMap::get(rank, 0, exprs, context());
}

AffineExpr StepBuilder::d(unsigned i) { return getAffineDimExpr(i, context()); }

Value StepBuilder::empty(ArrayRef<int64_t> shape, Type elt) {
  (void)tensorType(shape, elt);
  return tensor::EmptyOp::create(b, shape, elt);
}

Value StepBuilder::fill(ArrayRef<int64_t> shape, Type elt, double value) {
  Value init = empty(shape, elt);
  Value scalar = arith::ConstantOp::create(b, b.getFloatAttr(elt, value));
  return linalg::FillOp::create(b, ValueRange{scalar}, ValueRange{init})
      .getResult(0);
}

SmallVector<Value> StepBuilder::generic(ArrayRef<Operand> ins,
                                        ArrayRef<Operand> outs,
                                        ArrayRef<utils::IteratorType> iterators,
                                        BodyFn body) {
  SmallVector<Value> inValues, outValues;
  SmallVector<AffineMap> maps;
  SmallVector<Type> resultTypes;
  for (const Operand &in : ins) {
    inValues.push_back(in.value);
    maps.push_back(in.map);
  }
  for (const Operand &out : outs) {
    outValues.push_back(out.value);
    maps.push_back(out.map);
    resultTypes.push_back(out.value.getType());
  }
  auto op = linalg::GenericOp::create(
      b, resultTypes, inValues, outValues, maps, iterators,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        BodyBuilder bb(nb, loc);
        SmallVector<Value> promoted;
        SmallVector<Operation *> extensions;
        for (Value arg : args) {
          if (isa<FloatType>(arg.getType()) && !arg.getType().isF32()) {
            arg = arith::ExtFOp::create(nb, loc, nb.getF32Type(), arg);
            extensions.push_back(arg.getDefiningOp());
          }
          promoted.push_back(arg);
        }
        SmallVector<Value> results = body(bb, promoted);

        assert(results.size() == outValues.size() && "one result per output");
        for (auto [i, r] : llvm::enumerate(results)) {
          Type want = elementTypeOf(outValues[i]);
          if (r.getType() != want) {
            if (cast<FloatType>(want).getWidth() <
                cast<FloatType>(r.getType()).getWidth())
              r = arith::TruncFOp::create(nb, loc, want, r);
            else
              r = arith::ExtFOp::create(nb, loc, want, r);
          }
          results[i] = r;
        }
        linalg::YieldOp::create(nb, loc, results);
        // Extensions of arguments nothing read (typically the outputs of
        // parallel generics) are dropped again.
        for (Operation *ext : extensions)
          if (ext->use_empty())
            ext->erase();
      });
  // The block arguments take the op's path rather than their operands'.
  for (BlockArgument arg : op.getRegion().front().getArguments())
    arg.setLoc(op.getLoc());
  return SmallVector<Value>(op.getResults());
}

Value StepBuilder::map(ArrayRef<int64_t> shape, Type elt, ArrayRef<Operand> ins,
                       BodyFn body) {
  unsigned rank = shape.size();
  Value init = empty(shape, elt);
  SmallVector<utils::IteratorType> iters(rank, kPar);
  return generic(ins, {Operand{init, identity(rank)}}, iters, body)[0];
}

Value StepBuilder::elementwise(Type elt, ArrayRef<Value> ins, BodyFn body) {
  SmallVector<int64_t> shape = shapeOf(ins[0]);
  SmallVector<Operand> operands;
  for (Value v : ins)
    operands.push_back({v, identity(shape.size())});
  return map(shape, elt, operands, body);
}

Value StepBuilder::reduceLast(ArrayRef<Operand> ins, ArrayRef<int64_t> inShape,
                              bool isMax, BodyFn fn) {
  unsigned rank = inShape.size();
  SmallVector<int64_t> outShape(inShape.drop_back());
  SmallVector<unsigned> outDims;
  for (unsigned i = 0; i + 1 < rank; ++i)
    outDims.push_back(i);
  Value init = fill(outShape, f32(),
                    isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  SmallVector<utils::IteratorType> iters(rank, kPar);
  iters.back() = kRed;
  return generic(ins, {Operand{init, project(rank, outDims)}}, iters,
                 [&](BodyBuilder &e, ArrayRef<Value> a) {
                   Value acc = a.back();
                   Value x = fn ? fn(e, a.drop_back())[0] : a[0];
                   return SmallVector<Value>{isMax ? e.max(acc, x)
                                                   : e.add(acc, x)};
                 })[0];
}

Value StepBuilder::sumLeading(Value x, unsigned keep) {
  SmallVector<int64_t> shape = shapeOf(x);
  unsigned rank = shape.size();
  SmallVector<int64_t> outShape(shape.end() - keep, shape.end());
  SmallVector<unsigned> outDims;
  SmallVector<utils::IteratorType> iters;
  for (unsigned i = 0; i < rank; ++i) {
    bool kept = i + keep >= rank;
    iters.push_back(kept ? kPar : kRed);
    if (kept)
      outDims.push_back(i);
  }
  Value init = zeros(outShape, f32());
  return generic({Operand{x, identity(rank)}},
                 {Operand{init, project(rank, outDims)}}, iters,
                 [](BodyBuilder &e, ArrayRef<Value> a) {
                   return SmallVector<Value>{e.add(a[1], a[0])};
                 })[0];
}

Value StepBuilder::matmul(Value a, Value bm, bool transposeA, bool transposeB,
                          Value acc) {
  assert(!(transposeA && transposeB) && "at most one transposed operand");
  SmallVector<int64_t> as = shapeOf(a), bs = shapeOf(bm);
  unsigned rank = as.size();
  assert((rank == 2 || rank == 3) && bs.size() == rank && "2-D or 3-D");
  int64_t m = transposeA ? as[rank - 1] : as[rank - 2];
  int64_t n = transposeB ? bs[rank - 2] : bs[rank - 1];
  SmallVector<int64_t> outShape;
  if (rank == 3)
    outShape.push_back(as[0]);
  outShape.push_back(m);
  outShape.push_back(n);
  if (!acc)
    acc = zeros(outShape, f32());
  Location loc = b.getLoc();
  SmallVector<Value> ins{a, bm};
  SmallVector<Value> outs{acc};
  Operation *op;
  if (rank == 2) {
    if (transposeA)
      op = linalg::MatmulTransposeAOp::create(b, loc, ins, outs);
    else if (transposeB)
      op = linalg::MatmulTransposeBOp::create(b, loc, ins, outs);
    else
      op = linalg::MatmulOp::create(b, loc, ins, outs);
  } else {
    if (transposeA)
      op = linalg::BatchMatmulTransposeAOp::create(b, loc, ins, outs);
    else if (transposeB)
      op = linalg::BatchMatmulTransposeBOp::create(b, loc, ins, outs);
    else
      op = linalg::BatchMatmulOp::create(b, loc, ins, outs);
  }
  return op->getResult(0);
}

Value StepBuilder::convert(Value v, Type elt) {
  if (elementTypeOf(v) == elt)
    return v;
  return elementwise(elt, {v}, [](BodyBuilder &, ArrayRef<Value> a) {
    return SmallVector<Value>{a[0]};
  });
}

Value StepBuilder::expand(Value v, ArrayRef<int64_t> shape,
                          ArrayRef<ReassociationIndices> reassoc) {
  return tensor::ExpandShapeOp::create(b, tensorType(shape, elementTypeOf(v)),
                                       v, reassoc);
}

Value StepBuilder::collapse(Value v, ArrayRef<ReassociationIndices> reassoc) {
  return tensor::CollapseShapeOp::create(b, v, reassoc);
}

Value StepBuilder::transpose(Value v, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> in = shapeOf(v), out;
  for (int64_t p : perm)
    out.push_back(in[p]);
  Value init = empty(out, elementTypeOf(v));
  return linalg::TransposeOp::create(b, v, init, perm)->getResult(0);
}
