//===- GPUSplitReductions.cpp - --zshard-gpu-split-reductions -------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_GPUSPLITREDUCTIONS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

/// A reduction the pass splits, and how.
struct SplitPlan {
  linalg::GenericOp op;
  /// The reduced loop dimension and its size.
  unsigned reducedDim;
  int64_t reducedSize;
  /// Output elements (the product of the parallel loop ranges).
  int64_t outputs;
  /// The combiner of each output, in output order.
  SmallVector<Operation *> combiners;
  /// The new parallel dimension's size S.
  int64_t ways = 0;
  /// Interleaved (thread s reads s, s + S, ...) rather than chunked.
  bool interleaved = false;
};

bool isCommutativeFloatCombiner(Operation *op) {
  return isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
             arith::MaxNumFOp, arith::MinNumFOp>(op);
}

/// `op` as a reduction the pass may split, without its size S yet.
std::optional<SplitPlan> matchSplittable(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() != 1 ||
      !llvm::all_of(
          op.getIndexingMapsArray(),
          [](AffineMap map) { return map.isProjectedPermutation(); }) ||
      linalg::isaContractionOpInterface(op) ||
      !op.getBody()->getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  SmallVector<unsigned> reduced;
  op.getReductionDims(reduced);
  SplitPlan plan{op, reduced.front(), 0, 1, {}};
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [dim, range] : llvm::enumerate(ranges)) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    if (dim == plan.reducedDim)
      plan.reducedSize = range;
    else
      plan.outputs *= range;
  }
  AffineMap firstOutputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (map.isFunctionOfDim(plan.reducedDim) || map != firstOutputMap)
      return std::nullopt;
    SmallVector<Operation *> combiners;
    unsigned position = init.getOperandNumber() - op.getNumDpsInputs();
    if (!matchReduction(op.getRegionOutputArgs(), position, combiners) ||
        combiners.size() != 1 || !isCommutativeFloatCombiner(combiners[0]) ||
        !arith::getNeutralElement(combiners[0]))
      return std::nullopt;
    plan.combiners.push_back(combiners[0]);
  }
  // A row when the first input reading the reduced dimension has it
  // innermost.
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(plan.reducedDim))
      continue;
    plan.interleaved =
        map.getNumResults() > 0 &&
        map.getDimPosition(map.getNumResults() - 1) == plan.reducedDim;
    break;
  }
  return plan;
}

/// S for `plan`, or 0 when no split helps: a power of two dividing the
/// reduced size, each thread reading at least `minChunk` elements.
int64_t chooseWays(const SplitPlan &plan, int64_t threads, int64_t minChunk) {
  if (plan.outputs >= threads)
    return 0;
  int64_t best = 0;
  for (int64_t ways = 2;
       plan.reducedSize % ways == 0 && plan.reducedSize / ways >= minChunk;
       ways *= 2) {
    best = ways;
    if (plan.outputs * ways >= threads)
      break;
  }
  return best;
}

/// Rewrites `plan.op` into the partial reduction and the combination the
/// pass description shows.
void split(const SplitPlan &plan) {
  linalg::GenericOp op = plan.op;
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  OpBuilder b(op);
  unsigned numLoops = op.getNumLoops();
  int64_t ways = plan.ways, chunk = plan.reducedSize / ways;
  // The new dimension: innermost (after every old one) when interleaved,
  // else outermost; the old dimensions shift past it.
  unsigned newDim = plan.interleaved ? numLoops : 0;
  auto shifted = [&](unsigned dim) -> AffineExpr {
    return getAffineDimExpr(dim + (dim >= newDim ? 1 : 0), ctx);
  };
  AffineExpr s = getAffineDimExpr(newDim, ctx);

  // Inputs: the reduced dimension expanded into (chunk, S) or (S, chunk).
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    SmallVector<AffineExpr> exprs;
    if (!map.isFunctionOfDim(plan.reducedDim)) {
      for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
        exprs.push_back(shifted(map.getDimPosition(i)));
      maps.push_back(AffineMap::get(numLoops + 1, 0, exprs, ctx));
      inputs.push_back(input->get());
      continue;
    }
    auto type = cast<RankedTensorType>(input->get().getType());
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    for (unsigned i = 0, e = map.getNumResults(); i < e; ++i) {
      unsigned dim = map.getDimPosition(i);
      int64_t next = static_cast<int64_t>(shape.size());
      if (dim != plan.reducedDim) {
        exprs.push_back(shifted(dim));
        shape.push_back(type.getDimSize(i));
        groups.push_back({next});
        continue;
      }
      AffineExpr reduced = shifted(dim);
      if (plan.interleaved) {
        exprs.append({reduced, s});
        shape.append({chunk, ways});
      } else {
        exprs.append({s, reduced});
        shape.append({ways, chunk});
      }
      groups.push_back({next, next + 1});
    }
    maps.push_back(AffineMap::get(numLoops + 1, 0, exprs, ctx));
    auto expandedType = RankedTensorType::get(shape, type.getElementType());
    inputs.push_back(tensor::ExpandShapeOp::create(b, loc, expandedType,
                                                   input->get(), groups));
  }

  // Partial results: each output with S inserted (first when chunked, last
  // when interleaved), filled with the combiner's neutral element.
  SmallVector<Value> partials;
  SmallVector<AffineMap> partialMaps;
  for (auto [init, combiner] :
       llvm::zip(op.getDpsInitsMutable(), plan.combiners)) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    auto type = cast<RankedTensorType>(init.get().getType());
    SmallVector<AffineExpr> exprs;
    SmallVector<int64_t> shape;
    for (unsigned i = 0, e = map.getNumResults(); i < e; ++i) {
      exprs.push_back(shifted(map.getDimPosition(i)));
      shape.push_back(type.getDimSize(i));
    }
    if (plan.interleaved) {
      exprs.push_back(s);
      shape.push_back(ways);
    } else {
      exprs.insert(exprs.begin(), s);
      shape.insert(shape.begin(), ways);
    }
    maps.push_back(AffineMap::get(numLoops + 1, 0, exprs, ctx));
    partialMaps.push_back(AffineMap::getMultiDimIdentityMap(
        static_cast<unsigned>(shape.size()), ctx));
    Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    Value neutral =
        arith::ConstantOp::create(b, loc, *arith::getNeutralElement(combiner));
    partials.push_back(
        linalg::FillOp::create(b, loc, neutral, empty).getResult(0));
  }

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.insert(iterators.begin() + newDim, utils::IteratorType::parallel);
  auto partial =
      linalg::GenericOp::create(b, loc, ValueRange(partials).getTypes(), inputs,
                                partials, maps, iterators);
  IRMapping mapping;
  op.getRegion().cloneInto(&partial.getRegion(), mapping);
  partial->setDiscardableAttrs(op->getDiscardableAttrDictionary());

  // The combination: each output from its S partials, in order. Every
  // output has the same map (matchSplittable), so the same rank.
  unsigned rank =
      cast<RankedTensorType>(op.getDpsInits().front().getType()).getRank();
  unsigned first = plan.interleaved ? 0 : 1;
  SmallVector<AffineExpr> outExprs;
  for (unsigned i = 0; i < rank; ++i)
    outExprs.push_back(getAffineDimExpr(first + i, ctx));
  SmallVector<AffineMap> combineMaps(partialMaps);
  combineMaps.append(plan.combiners.size(),
                     AffineMap::get(rank + 1, 0, outExprs, ctx));
  SmallVector<utils::IteratorType> combineIterators(
      rank + 1, utils::IteratorType::parallel);
  combineIterators[plan.interleaved ? rank : 0] =
      utils::IteratorType::reduction;
  SmallVector<Value> inits(op.getDpsInits());
  auto combine = linalg::GenericOp::create(
      b, loc, op.getResultTypes(), partial.getResults(), inits, combineMaps,
      combineIterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        SmallVector<Value> results;
        size_t count = plan.combiners.size();
        for (size_t i = 0; i < count; ++i) {
          Operation *combined = nested.clone(*plan.combiners[i]);
          combined->setOperands({args[i], args[count + i]});
          results.push_back(combined->getResult(0));
        }
        linalg::YieldOp::create(nested, nestedLoc, results);
      });
  combine->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  op.replaceAllUsesWith(combine.getResults());
  op.erase();
}

struct GPUSplitReductionsPass
    : public mlir::zshard::impl::GPUSplitReductionsBase<
          GPUSplitReductionsPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

void GPUSplitReductionsPass::runOnOperation() {
  if (threads < 2 || minChunk < 1) {
    getOperation().emitError("threads must be at least 2 and min-chunk at "
                             "least 1, got ")
        << static_cast<int64_t>(threads) << " and "
        << static_cast<int64_t>(minChunk);
    return signalPassFailure();
  }
  SmallVector<SplitPlan> plans;
  getOperation().walk([&](linalg::GenericOp op) {
    std::optional<SplitPlan> plan = matchSplittable(op);
    if (!plan)
      return;
    plan->ways = chooseWays(*plan, threads, minChunk);
    if (plan->ways > 1)
      plans.push_back(std::move(*plan));
  });
  for (const SplitPlan &plan : plans) {
    split(plan);
    ++numSplit;
  }
}
