//===- InterleaveReductions.cpp - --zshard-interleave-reductions ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "RowReduction.h"
#include "zshard/Conversion/Passes.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_INTERLEAVEREDUCTIONS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// The loop whose rows advance together: the innermost parallel loop the
/// output's indexing map uses, if it has more than one iteration and the map
/// gives each row its own output element.
std::optional<unsigned> findLaneDim(const RowReduction &r) {
  linalg::GenericOp op = r.op;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!outMap.isProjectedPermutation())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (int dim = static_cast<int>(ranges.size()) - 2; dim >= 0; --dim)
    if (outMap.isFunctionOfDim(dim))
      return ranges[dim] > 1 ? std::optional<unsigned>(dim) : std::nullopt;
  return std::nullopt;
}

/// The number of memref inputs that `r` reads along its reduced loop with the
/// lanes not adjacent in memory: one gather per element each, where the
/// other inputs are vector loads or one value a row.
unsigned countGatheredInputs(const RowReduction &r, unsigned laneDim) {
  linalg::GenericOp op = r.op;
  unsigned reductionDim = op.getNumLoops() - 1;
  unsigned gathered = 0;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isa<MemRefType>(input->get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(reductionDim))
      continue;
    if (map.getNumResults() == 0 ||
        map.getResults().back() != getAffineDimExpr(laneDim, op.getContext()))
      ++gathered;
  }
  return gathered;
}

/// Emits the reductions of rows `first` .. `first + count - 1` of the lane
/// loop: their accumulators into `scratch`, the reduced loop outside a loop
/// over the rows (each row's combines in its own order), and the
/// accumulators back.
void emitTile(OpBuilder &b, const RowReduction &r, unsigned laneDim,
              SmallVector<Value> dims, Value first, int64_t count,
              Value scratch, llvm::function_ref<Value(int64_t)> index) {
  linalg::GenericOp op = r.op;
  Location loc = op.getLoc();
  Value zero = index(0), one = index(1), lanes = index(count);
  unsigned reductionDim = dims.size() - 1;
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);

  // Runs `body(lane, dims)` in a loop over the lanes of the tile, with the
  // lane loop's index in `dims`.
  auto forEachLane =
      [&](llvm::function_ref<void(Value, ArrayRef<Value>)> body) {
        auto loop = scf::ForOp::create(b, loc, zero, lanes, one);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        Value lane = loop.getInductionVar();
        dims[laneDim] = arith::AddIOp::create(b, loc, first, lane);
        body(lane, dims);
      };

  dims[reductionDim] = zero;
  forEachLane([&](Value lane, ArrayRef<Value> at) {
    SmallVector<Value> out = applyIndexingMap(b, loc, outMap, at);
    memref::StoreOp::create(b, loc,
                            memref::LoadOp::create(b, loc, init->get(), out),
                            scratch, lane);
  });

  int64_t extent = op.getStaticLoopRanges().back();
  auto reduce = scf::ForOp::create(b, loc, zero, index(extent), one);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(reduce.getBody());
    dims[reductionDim] = reduce.getInductionVar();
    forEachLane([&](Value lane, ArrayRef<Value> at) {
      Value value = emitReducedValue(b, r, at);
      Value acc = memref::LoadOp::create(b, loc, scratch, lane);
      memref::StoreOp::create(b, loc, emitCombine(b, r, acc, value), scratch,
                              lane);
    });
  }

  dims[reductionDim] = zero;
  forEachLane([&](Value lane, ArrayRef<Value> at) {
    SmallVector<Value> out = applyIndexingMap(b, loc, outMap, at);
    memref::StoreOp::create(b, loc,
                            memref::LoadOp::create(b, loc, scratch, lane),
                            init->get(), out);
  });
}

/// Rewrites `r` into the loops the pass description shows, `lanes` rows of
/// loop `laneDim` at a time.
void interleaveRowReduction(const RowReduction &r, unsigned laneDim,
                            int64_t lanes, Value scratch) {
  linalg::GenericOp op = r.op;
  Location loc = op.getLoc();
  // The loops after `op`, each index constant once before it, so that the
  // constants dominate every loop.
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  OpBuilder constants(op);
  DenseMap<int64_t, Value> created;
  auto index = [&](int64_t value) -> Value {
    Value &constant = created[value];
    if (!constant)
      constant = arith::ConstantIndexOp::create(constants, loc, value);
    return constant;
  };
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Value zero = index(0), one = index(1);

  // One loop per parallel dimension but the lanes', outermost first.
  SmallVector<Value> dims(ranges.size());
  for (unsigned dim = 0; dim + 1 < ranges.size(); ++dim) {
    if (dim == laneDim)
      continue;
    auto loop = scf::ForOp::create(b, loc, zero, index(ranges[dim]), one);
    dims[dim] = loop.getInductionVar();
    b.setInsertionPointToStart(loop.getBody());
  }

  int64_t rows = ranges[laneDim];
  int64_t whole = rows / lanes * lanes;
  if (whole > 0) {
    auto tiles = scf::ForOp::create(b, loc, zero, index(whole), index(lanes));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    emitTile(b, r, laneDim, dims, tiles.getInductionVar(), lanes, scratch,
             index);
  }
  if (rows > whole)
    emitTile(b, r, laneDim, dims, index(whole), rows - whole, scratch, index);
  op.erase();
}

struct InterleaveReductionsPass
    : public mlir::zshard::impl::InterleaveReductionsBase<
          InterleaveReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (lanes <= 0) {
      getOperation().emitError()
          << "zshard-interleave-reductions: lanes must be positive, got "
          << static_cast<int64_t>(lanes);
      return signalPassFailure();
    }
    SmallVector<std::pair<RowReduction, unsigned>> found;
    getOperation().walk([&](linalg::GenericOp op) {
      // A float sum or product: LLVM may not reorder it, so it stays one
      // chain a row. Other combiners (a maximum, integer arithmetic) are
      // exact in any order, and LLVM vectorises them along the row.
      std::optional<RowReduction> r = matchRowReduction(op);
      if (!r || !isa<arith::AddFOp, arith::MulFOp>(r->combiner))
        return;
      // Two gathers an element cost more than the chain they break (a
      // LayerNorm backward's row dot product, 768 wide: 4.7 to 7.0 ms a
      // step on an AVX-512 EPYC); one is a gain (its row sum: 9.0 to 7.3).
      std::optional<unsigned> laneDim = findLaneDim(*r);
      if (laneDim && countGatheredInputs(*r, *laneDim) <= 1)
        found.push_back({*r, *laneDim});
    });
    for (auto &[r, laneDim] : found) {
      // The lanes' accumulators.
      auto outType =
          cast<MemRefType>(r.op.getDpsInitOperand(0)->get().getType());
      Value scratch = createEntryBuffer(r, lanes, outType.getElementType());
      if (!scratch)
        continue;
      interleaveRowReduction(r, laneDim, lanes, scratch);
      ++numInterleaved;
    }
  }
};

} // namespace
