//===- SplitReductions.cpp - --zshard-split-reductions --------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "RowReduction.h"
#include "zshard/Conversion/Passes.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_SPLITREDUCTIONS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// `op` as a row reduction the pass splits: a sum whose summand takes at
/// least `minOps` body ops.
std::optional<RowReduction> matchSplitReduction(linalg::GenericOp op,
                                                unsigned minOps) {
  std::optional<RowReduction> r = matchRowReduction(op);
  if (!r || !isa<arith::AddFOp>(r->combiner) || r->bodyOps < minOps)
    return std::nullopt;
  return r;
}

/// Rewrites `r` into the loops the pass description shows, computing each
/// chunk of reduced values into `scratch` (a 1-d buffer of `chunk`
/// elements).
void splitRowReduction(const RowReduction &r, int64_t chunk, Value scratch) {
  linalg::GenericOp op = r.op;
  Location loc = op.getLoc();
  OpBuilder b(op);
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t extent = ranges.back();
  Value zero = index(0), one = index(1), chunkSize = index(chunk),
        extentSize = index(extent);

  // One loop per parallel dimension, outermost first.
  SmallVector<Value> ivs = buildRowLoops(b, r, zero, one);

  OpOperand *init = op.getDpsInitOperand(0);
  SmallVector<Value> outDims(ivs);
  outDims.push_back(zero);
  SmallVector<Value> outIndices =
      applyIndexingMap(b, loc, op.getMatchingIndexingMap(init), outDims);
  Value start = memref::LoadOp::create(b, loc, init->get(), outIndices);

  auto chunks = scf::ForOp::create(b, loc, zero, extentSize, chunkSize,
                                   ValueRange{start});
  b.setInsertionPointToStart(chunks.getBody());
  Value first = chunks.getInductionVar();
  Value left = arith::SubIOp::create(b, loc, extentSize, first);
  Value length = arith::MinSIOp::create(b, loc, left, chunkSize);

  // The reduced values of the chunk, into the scratch buffer.
  auto compute = scf::ForOp::create(b, loc, zero, length, one);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(compute.getBody());
    Value j = compute.getInductionVar();
    SmallVector<Value> dims(ivs);
    dims.push_back(arith::AddIOp::create(b, loc, first, j));
    memref::StoreOp::create(b, loc, emitReducedValue(b, r, dims), scratch, j);
  }

  // Their sum, in order, onto the accumulator.
  auto sum = scf::ForOp::create(b, loc, zero, length, one,
                                ValueRange{chunks.getRegionIterArgs()[0]});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(sum.getBody());
    Value value =
        memref::LoadOp::create(b, loc, scratch, sum.getInductionVar());
    scf::YieldOp::create(b, loc,
                         emitCombine(b, r, sum.getRegionIterArgs()[0], value));
  }
  scf::YieldOp::create(b, loc, sum.getResult(0));

  b.setInsertionPointAfter(chunks);
  memref::StoreOp::create(b, loc, chunks.getResult(0), init->get(), outIndices);
  op.erase();
}

struct SplitReductionsPass
    : public mlir::zshard::impl::SplitReductionsBase<SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (chunk <= 0) {
      getOperation().emitError()
          << "zshard-split-reductions: chunk must be positive, got "
          << static_cast<int64_t>(chunk);
      return signalPassFailure();
    }
    SmallVector<RowReduction> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<RowReduction> r = matchSplitReduction(op, minOps))
        found.push_back(*r);
    });
    for (RowReduction &r : found) {
      // One stack buffer per split op.
      Value scratch = createEntryBuffer(r, chunk, r.reduced.getType());
      if (!scratch)
        continue;
      splitRowReduction(r, chunk, scratch);
      ++numSplit;
    }
  }
};

} // namespace
