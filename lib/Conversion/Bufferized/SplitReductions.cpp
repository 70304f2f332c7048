//===- SplitReductions.cpp - --zshard-split-reductions --------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_SPLITREDUCTIONS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

/// A row reduction the pass splits: a generic whose innermost loop reduces
/// into its one output by `combiner`, `acc + reduced`, where `reduced` is
/// computed from the inputs alone.
struct RowReduction {
  linalg::GenericOp op;
  Operation *combiner;
  Value reduced;
};

/// The number of ops of `body` other than `combiner` and the terminator, or
/// nullopt when one of them has memory effects or regions.
std::optional<unsigned> countBodyOps(Block &body, Operation *combiner) {
  unsigned count = 0;
  for (Operation &op : body.without_terminator()) {
    if (&op == combiner)
      continue;
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      return std::nullopt;
    ++count;
  }
  return count;
}

std::optional<RowReduction> matchRowReduction(linalg::GenericOp op,
                                              unsigned minOps) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.empty() || iterators.back() != utils::IteratorType::reduction)
    return std::nullopt;
  if (!llvm::all_of(ArrayRef(iterators).drop_back(), [](auto iterator) {
        return iterator == utils::IteratorType::parallel;
      }))
    return std::nullopt;
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return std::nullopt;

  OpOperand *init = op.getDpsInitOperand(0);
  auto outType = dyn_cast<MemRefType>(init->get().getType());
  if (!outType || !isa<FloatType>(outType.getElementType()))
    return std::nullopt;
  unsigned reductionDim = iterators.size() - 1;
  if (op.getMatchingIndexingMap(init).isFunctionOfDim(reductionDim))
    return std::nullopt;
  // An input that is the output would see the partial sums.
  for (OpOperand *input : op.getDpsInputOperands())
    if (input->get() == init->get())
      return std::nullopt;

  Block &body = op.getRegion().front();
  BlockArgument acc = op.getMatchingBlockArgument(init);
  if (!acc.hasOneUse())
    return std::nullopt;
  auto combiner = dyn_cast<arith::AddFOp>(*acc.getUsers().begin());
  if (!combiner || combiner->getBlock() != &body ||
      body.getTerminator()->getOperand(0) != combiner.getResult() ||
      !combiner.getResult().hasOneUse())
    return std::nullopt;
  Value reduced =
      combiner.getLhs() == acc ? combiner.getRhs() : combiner.getLhs();
  if (reduced == acc)
    return std::nullopt;
  std::optional<unsigned> count = countBodyOps(body, combiner);
  if (!count || *count < minOps)
    return std::nullopt;
  return RowReduction{op, combiner, reduced};
}

/// The indices `map` gives for the loop indices `dims`.
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ArrayRef<Value> dims) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, expr), dims));
  return indices;
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
  SmallVector<Value> bounds;
  for (int64_t range : ArrayRef(ranges).drop_back())
    bounds.push_back(index(range));
  SmallVector<Value> ivs;
  for (Value bound : bounds) {
    auto loop = scf::ForOp::create(b, loc, zero, bound, one);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
  }

  OpOperand *init = op.getDpsInitOperand(0);
  SmallVector<Value> outDims(ivs);
  outDims.push_back(zero);
  SmallVector<Value> outIndices =
      applyMap(b, loc, op.getMatchingIndexingMap(init), outDims);
  Value start = memref::LoadOp::create(b, loc, init->get(), outIndices);

  auto chunks = scf::ForOp::create(b, loc, zero, extentSize, chunkSize,
                                   ValueRange{start});
  b.setInsertionPointToStart(chunks.getBody());
  Value first = chunks.getInductionVar();
  Value left = arith::SubIOp::create(b, loc, extentSize, first);
  Value length = arith::MinSIOp::create(b, loc, left, chunkSize);

  // The reduced values of the chunk, into the scratch buffer.
  Block &body = op.getRegion().front();
  auto compute = scf::ForOp::create(b, loc, zero, length, one);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(compute.getBody());
    Value j = compute.getInductionVar();
    SmallVector<Value> dims(ivs);
    dims.push_back(arith::AddIOp::create(b, loc, first, j));
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(input);
      if (!isa<MemRefType>(input->get().getType())) {
        mapping.map(arg, input->get());
        continue;
      }
      SmallVector<Value> indices =
          applyMap(b, loc, op.getMatchingIndexingMap(input), dims);
      mapping.map(arg, memref::LoadOp::create(b, loc, input->get(), indices));
    }
    for (Operation &bodyOp : body.without_terminator()) {
      if (&bodyOp == r.combiner)
        continue;
      if (auto dim = dyn_cast<linalg::IndexOp>(bodyOp)) {
        mapping.map(dim.getResult(), dims[dim.getDim()]);
        continue;
      }
      b.clone(bodyOp, mapping);
    }
    memref::StoreOp::create(b, loc, mapping.lookupOrDefault(r.reduced), scratch,
                            j);
  }

  // Their sum, in order, onto the accumulator.
  auto sum = scf::ForOp::create(b, loc, zero, length, one,
                                ValueRange{chunks.getRegionIterArgs()[0]});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(sum.getBody());
    Value value =
        memref::LoadOp::create(b, loc, scratch, sum.getInductionVar());
    IRMapping mapping;
    mapping.map(op.getMatchingBlockArgument(init), sum.getRegionIterArgs()[0]);
    mapping.map(r.reduced, value);
    Operation *add = b.clone(*r.combiner, mapping);
    scf::YieldOp::create(b, loc, add->getResult(0));
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
      if (std::optional<RowReduction> r = matchRowReduction(op, minOps))
        found.push_back(*r);
    });
    for (RowReduction &r : found) {
      // One stack buffer per split op, at the entry of its function, out of
      // every loop.
      auto func = r.op->getParentOfType<FunctionOpInterface>();
      if (!func || func.isExternal())
        continue;
      OpBuilder b(&func.getFunctionBody().front(),
                  func.getFunctionBody().front().begin());
      Type element = r.reduced.getType();
      Value scratch = memref::AllocaOp::create(
          b, r.op.getLoc(), MemRefType::get({chunk}, element));
      splitRowReduction(r, chunk, scratch);
      ++numSplit;
    }
  }
};

} // namespace
