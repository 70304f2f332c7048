//===- LaneReductions.cpp - --zshard-lane-reductions ----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "RowReduction.h"
#include "zshard/Conversion/Passes.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_LANEREDUCTIONS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// Whether the body of `r` computes its reduced value with ops that apply
/// lane by lane to vectors of `lanes` scalars (arith and math ops on floats
/// and integers; no `linalg.index`, whose vector form would be an index
/// vector).
bool hasLanewiseBody(const RowReduction &r) {
  linalg::GenericOp generic = r.op;
  for (Operation &op : generic.getRegion().front().without_terminator()) {
    if (&op == r.combiner)
      continue;
    bool scalars =
        llvm::all_of(op.getOperandTypes(),
                     [](Type type) { return type.isIntOrFloat(); }) &&
        llvm::all_of(op.getResultTypes(),
                     [](Type type) { return type.isIntOrFloat(); });
    if (!scalars)
      return false;
    if (!op.hasTrait<OpTrait::Elementwise>() &&
        !(isa<arith::ConstantOp>(op) && op.getNumResults() == 1))
      return false;
  }
  return true;
}

/// Whether every memref input that `r` reads along its reduced loop reads it
/// as its innermost, unit-stride dimension (consecutive elements of the
/// row: one vector load a lane group), the reduced loop appearing in no
/// other index, its elements whole bytes.
bool readsRowsContiguously(const RowReduction &r) {
  linalg::GenericOp op = r.op;
  unsigned reductionDim = op.getNumLoops() - 1;
  AffineExpr reduced = getAffineDimExpr(reductionDim, op.getContext());
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type)
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(reductionDim))
      continue;
    ArrayRef<AffineExpr> results = map.getResults();
    if (results.back() != reduced || !type.isLastDimUnitStride())
      return false;
    // A vector of i1 is packed bits in memory where a memref of i1 keeps a
    // byte an element.
    if (type.getElementTypeBitWidth() % 8 != 0)
      return false;
    if (llvm::any_of(results.drop_back(), [&](AffineExpr expr) {
          return expr.isFunctionOfDim(reductionDim);
        }))
      return false;
  }
  return true;
}

/// Emits the body of `r` for `lanes` consecutive elements of the reduced
/// loop, starting at `dims` (the loop indices of the first), as vector ops:
/// the rows' inputs as vector loads, the others (a row's mean, a constant)
/// broadcast. Returns the reduced values as a vector.
Value emitReducedVector(OpBuilder &b, const RowReduction &r,
                        ArrayRef<Value> dims, int64_t lanes) {
  linalg::GenericOp op = r.op;
  Location loc = op.getLoc();
  unsigned reductionDim = op.getNumLoops() - 1;
  auto vectorOf = [&](Type scalar) { return VectorType::get({lanes}, scalar); };
  auto broadcast = [&](Value scalar) -> Value {
    return vector::BroadcastOp::create(b, loc, vectorOf(scalar.getType()),
                                       scalar);
  };

  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (!isa<MemRefType>(input->get().getType())) {
      mapping.map(arg, broadcast(input->get()));
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(input);
    SmallVector<Value> indices = applyIndexingMap(b, loc, map, dims);
    if (map.isFunctionOfDim(reductionDim))
      mapping.map(arg, vector::LoadOp::create(b, loc, vectorOf(arg.getType()),
                                              input->get(), indices));
    else
      mapping.map(arg, broadcast(memref::LoadOp::create(b, loc, input->get(),
                                                        indices)));
  }

  Block &body = op.getRegion().front();
  for (Operation &bodyOp : body.without_terminator()) {
    if (&bodyOp == r.combiner)
      continue;
    // Values from above the body (constants the outlining moved in) are
    // the same in every lane.
    for (Value operand : bodyOp.getOperands())
      if (!mapping.contains(operand))
        mapping.map(operand, broadcast(operand));
    if (isa<arith::ConstantOp>(bodyOp)) {
      Operation *scalar = b.clone(bodyOp);
      mapping.map(bodyOp.getResult(0), broadcast(scalar->getResult(0)));
      continue;
    }
    Operation *lanewise = b.clone(bodyOp, mapping);
    for (OpResult result : lanewise->getResults())
      result.setType(vectorOf(result.getType()));
  }
  Value reduced = r.reduced;
  if (!mapping.contains(reduced))
    mapping.map(reduced, broadcast(reduced));
  return mapping.lookup(reduced);
}

/// `r`'s combiner on two vectors, lane by lane.
Value emitCombineVector(OpBuilder &b, const RowReduction &r, Value acc,
                        Value value) {
  linalg::GenericOp op = r.op;
  IRMapping mapping;
  mapping.map(op.getMatchingBlockArgument(op.getDpsInitOperand(0)), acc);
  mapping.map(r.reduced, value);
  Operation *combined = b.clone(*r.combiner, mapping);
  combined->getResult(0).setType(acc.getType());
  return combined->getResult(0);
}

/// Rewrites `r` into the loops the pass description shows, `rows`
/// consecutive rows of the innermost parallel loop at a time where its
/// extent is a multiple of `rows` (else one): their lane sums advance
/// together, independent chains, each row in its own order.
void laneRowReduction(const RowReduction &r, int64_t lanes, int64_t rows) {
  linalg::GenericOp op = r.op;
  Location loc = op.getLoc();
  OpBuilder b(op);
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t extent = ranges.back(), whole = extent / lanes * lanes;
  Value zero = index(0), one = index(1), step = index(lanes),
        wholeSize = index(whole), extentSize = index(extent);
  // The innermost parallel loop's rows, `group` at a time.
  unsigned rowDim = 0;
  int64_t group = 1;
  if (ranges.size() >= 2) {
    rowDim = ranges.size() - 2;
    if (ranges[rowDim] % rows == 0)
      group = rows;
  }

  // One loop per parallel dimension, outermost first, the innermost over
  // groups of rows.
  SmallVector<Value> dims =
      buildRowLoops(b, r, zero, one, group == 1 ? one : index(group));
  dims.push_back(zero);
  SmallVector<SmallVector<Value>> rowDims(group, dims);
  for (int64_t g = 1; g < group; ++g)
    rowDims[g][rowDim] = arith::AddIOp::create(b, loc, dims[rowDim], index(g));

  OpOperand *init = op.getDpsInitOperand(0);
  SmallVector<SmallVector<Value>> outIndices;
  SmallVector<Value> accs, firsts;
  for (int64_t g = 0; g < group; ++g) {
    outIndices.push_back(
        applyIndexingMap(b, loc, op.getMatchingIndexingMap(init), rowDims[g]));
    accs.push_back(
        memref::LoadOp::create(b, loc, init->get(), outIndices.back()));
  }

  // The body of `loop` over the reduced dimension: each row's value (a
  // vector of `lanes` consecutive ones, or one) at the loop's index,
  // combined onto the row's iteration argument.
  auto advanceRows = [&](scf::ForOp loop, bool vectors) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> combined;
    for (int64_t g = 0; g < group; ++g) {
      rowDims[g].back() = loop.getInductionVar();
      Value acc = loop.getRegionIterArgs()[g];
      combined.push_back(
          vectors ? emitCombineVector(
                        b, r, acc, emitReducedVector(b, r, rowDims[g], lanes))
                  : emitCombine(b, r, acc, emitReducedValue(b, r, rowDims[g])));
    }
    scf::YieldOp::create(b, loc, combined);
  };

  // Lane l sums elements l, l + lanes, l + 2 lanes, ... in order, from the
  // first one.
  for (int64_t g = 0; g < group; ++g)
    firsts.push_back(emitReducedVector(b, r, rowDims[g], lanes));
  auto partials = scf::ForOp::create(b, loc, step, wholeSize, step, firsts);
  advanceRows(partials, /*vectors=*/true);

  // The lanes onto the output's value in lane order, then the elements
  // past the last whole group in order.
  for (int64_t g = 0; g < group; ++g)
    for (int64_t lane = 0; lane < lanes; ++lane)
      accs[g] =
          emitCombine(b, r, accs[g],
                      vector::ExtractOp::create(b, loc, partials.getResult(g),
                                                ArrayRef<int64_t>{lane}));
  if (whole < extent) {
    auto tail = scf::ForOp::create(b, loc, wholeSize, extentSize, one, accs);
    advanceRows(tail, /*vectors=*/false);
    accs.assign(tail.getResults().begin(), tail.getResults().end());
  }
  for (int64_t g = 0; g < group; ++g)
    memref::StoreOp::create(b, loc, accs[g], init->get(), outIndices[g]);
  op.erase();
}

struct LaneReductionsPass
    : public mlir::zshard::impl::LaneReductionsBase<LaneReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (lanes < 2) {
      getOperation().emitError()
          << "zshard-lane-reductions: lanes must be at least 2, got "
          << static_cast<int64_t>(lanes);
      return signalPassFailure();
    }
    if (rows < 1) {
      getOperation().emitError()
          << "zshard-lane-reductions: rows must be at least 1, got "
          << static_cast<int64_t>(rows);
      return signalPassFailure();
    }
    SmallVector<RowReduction> found;
    getOperation().walk([&](linalg::GenericOp op) {
      std::optional<RowReduction> r = matchRowReduction(op);
      if (!r || !isa<arith::AddFOp>(r->combiner))
        return;
      // Fewer than two lane groups: the lanes would cost more than they
      // save.
      if (op.getStaticLoopRanges().back() < 2 * lanes)
        return;
      if (hasLanewiseBody(*r) && readsRowsContiguously(*r))
        found.push_back(*r);
    });
    for (RowReduction &r : found) {
      laneRowReduction(r, lanes, rows);
      ++numLaned;
    }
  }
};

} // namespace
