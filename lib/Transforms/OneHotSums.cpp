//===- OneHotSums.cpp - Sums over one-hot tensors, folded -----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// A cross-entropy backward, as the exporter traces it, builds the gradient of
// the picked log probabilities as a dense [tokens, vocab] tensor that is zero
// but for the target's column, then sums each row (the log-softmax
// backward's sum of its incoming gradient) and reads the tensor once more
// for dlogits. The sum needs one element a row; here it is computed from
// that element, the tensor is then read once (and, with no other reader,
// fused into that read: never written).
//
// The producer's body must yield, at position r of the summed dimension,
//   f(select(r == c, a, 0))
// with c and a independent of r, 0 a constant zero of either sign, and f a
// chain of multiplications by values independent of r (and negations). Then
// every element off the match is w = f(0), which is +-0 or NaN (0 times an
// infinity or a NaN), and the reduction, a sum from +0 in order over a
// dimension of two or more, is
//   NaN                           if w is NaN (it adds w at least once),
//   +0 + f(a)                     if c lies in [0, size) (the zeros added
//                                 before and after leave f(a) or +0),
//   +0 + w                        otherwise,
// which is what the folded op computes: bit for bit the reduction's result.
//
//===----------------------------------------------------------------------===//

#include "OneHotSums.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace {

/// A one-hot producer's body along its dimension `dim`: the pieces the fold
/// evaluates.
struct OneHotBody {
  /// The select whose condition is linalg.index dim == matched.
  arith::SelectOp pick;
  /// The position the index is compared with (independent of dim).
  Value matched;
  /// The multiplications and negations from pick to the yielded value.
  SmallVector<Operation *> chain;
};

/// Whether `value` is an arith.constant float zero of either sign.
bool isFloatZero(Value value) {
  FloatAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.getValue().isZero();
}

/// The one-hot structure of `producer`'s body along `dim`, if it has it:
/// every op that depends on linalg.index `dim` (or on an input indexed by
/// `dim`) is that index, its comparison, the select, or the chain.
std::optional<OneHotBody> matchOneHot(linalg::GenericOp producer,
                                      unsigned dim) {
  Block &body = producer.getRegion().front();
  llvm::SmallPtrSet<Value, 16> dependent;
  for (OpOperand &operand : producer->getOpOperands()) {
    BlockArgument arg = producer.getMatchingBlockArgument(&operand);
    if (!producer.isDpsInput(&operand) ||
        producer.getMatchingIndexingMap(&operand).isFunctionOfDim(dim))
      dependent.insert(arg);
  }
  SmallVector<Operation *> dependentOps;
  for (Operation &op : body.without_terminator()) {
    auto index = dyn_cast<linalg::IndexOp>(op);
    bool depends = (index && index.getDim() == dim) ||
                   llvm::any_of(op.getOperands(), [&](Value operand) {
                     return dependent.contains(operand);
                   });
    if (!depends)
      continue;
    if (op.getNumRegions() != 0 || op.getNumResults() != 1)
      return std::nullopt;
    dependent.insert(op.getResult(0));
    dependentOps.push_back(&op);
  }

  // From the yielded value back to the select.
  OneHotBody found;
  Value value = body.getTerminator()->getOperand(0);
  while (true) {
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != &body)
      return std::nullopt;
    if (isa<arith::NegFOp>(def)) {
      found.chain.push_back(def);
      value = def->getOperand(0);
      continue;
    }
    if (auto mul = dyn_cast<arith::MulFOp>(def)) {
      bool lhs = dependent.contains(mul.getLhs()),
           rhs = dependent.contains(mul.getRhs());
      if (lhs == rhs)
        return std::nullopt;
      found.chain.push_back(def);
      value = lhs ? mul.getLhs() : mul.getRhs();
      continue;
    }
    break;
  }
  std::reverse(found.chain.begin(), found.chain.end());
  found.pick = value.getDefiningOp<arith::SelectOp>();
  if (!found.pick || found.pick->getBlock() != &body ||
      dependent.contains(found.pick.getTrueValue()) ||
      !isFloatZero(found.pick.getFalseValue()))
    return std::nullopt;
  auto match = found.pick.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!match || match.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  for (auto [index, other] : {std::pair(match.getLhs(), match.getRhs()),
                              std::pair(match.getRhs(), match.getLhs())}) {
    auto indexOp = index.getDefiningOp<linalg::IndexOp>();
    if (indexOp && indexOp.getDim() == dim && !dependent.contains(other))
      found.matched = other;
  }
  if (!found.matched)
    return std::nullopt;

  // Nothing else may depend on the dimension, and each piece has one user.
  llvm::SmallPtrSet<Operation *, 8> allowed(found.chain.begin(),
                                            found.chain.end());
  allowed.insert(found.pick);
  allowed.insert(match);
  for (Value operand : match->getOperands())
    if (auto indexOp = operand.getDefiningOp<linalg::IndexOp>();
        indexOp && indexOp.getDim() == dim)
      allowed.insert(indexOp);
  for (Operation *op : dependentOps)
    if (!allowed.contains(op) || !op->hasOneUse())
      return std::nullopt;
  return found;
}

/// Whether `reduction` sums its one input over one dimension into an output
/// that starts as a fill of +0: the dimension, if so.
std::optional<unsigned> summedDimension(linalg::GenericOp reduction) {
  if (!reduction.hasPureTensorSemantics() || reduction.getNumDpsInputs() != 1 ||
      reduction.getNumDpsInits() != 1)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators =
      reduction.getIteratorTypesArray();
  if (llvm::count(iterators, utils::IteratorType::reduction) != 1)
    return std::nullopt;
  unsigned dim =
      llvm::find(iterators, utils::IteratorType::reduction) - iterators.begin();
  OpOperand *input = reduction.getDpsInputOperand(0);
  OpOperand *init = reduction.getDpsInitOperand(0);
  if (!reduction.getMatchingIndexingMap(input).isIdentity() ||
      reduction.getMatchingIndexingMap(init) !=
          reduction.getMatchingIndexingMap(input).dropResult(dim))
    return std::nullopt;

  Block &body = reduction.getRegion().front();
  auto add = dyn_cast_or_null<arith::AddFOp>(
      body.getTerminator()->getOperand(0).getDefiningOp());
  Value in = reduction.getMatchingBlockArgument(input),
        out = reduction.getMatchingBlockArgument(init);
  if (!add || &body.front() != add.getOperation() ||
      !((add.getLhs() == out && add.getRhs() == in) ||
        (add.getLhs() == in && add.getRhs() == out)))
    return std::nullopt;

  auto fill = init->get().getDefiningOp<linalg::FillOp>();
  FloatAttr start;
  if (!fill || !matchPattern(fill.getInputs().front(), m_Constant(&start)) ||
      !start.getValue().isPosZero())
    return std::nullopt;
  SmallVector<int64_t> ranges = reduction.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[dim]) || ranges[dim] < 2)
    return std::nullopt;
  return dim;
}

struct FoldOneHotSum : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp reduction,
                                PatternRewriter &rewriter) const override {
    std::optional<unsigned> dim = summedDimension(reduction);
    if (!dim)
      return rewriter.notifyMatchFailure(reduction, "not a sum from +0");
    auto producer = reduction.getDpsInputOperand(0)
                        ->get()
                        .getDefiningOp<linalg::GenericOp>();
    if (!producer || !producer.hasPureTensorSemantics() ||
        producer->getNumResults() != 1 ||
        producer.getNumParallelLoops() != producer.getNumLoops() ||
        producer.getNumLoops() != reduction.getNumLoops() ||
        !producer.getMatchingIndexingMap(producer.getDpsInitOperand(0))
             .isIdentity())
      return rewriter.notifyMatchFailure(reduction, "no elementwise producer");
    std::optional<OneHotBody> oneHot = matchOneHot(producer, *dim);
    if (!oneHot)
      return rewriter.notifyMatchFailure(reduction, "producer not one-hot");

    // The producer's inputs its body reads, none indexed by the dimension.
    llvm::SmallBitVector summed(reduction.getNumLoops());
    summed.set(*dim);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    SmallVector<BlockArgument> reads;
    for (OpOperand *input : producer.getDpsInputOperands()) {
      BlockArgument arg = producer.getMatchingBlockArgument(input);
      if (arg.use_empty())
        continue;
      inputs.push_back(input->get());
      maps.push_back(
          getProjectedMap(producer.getMatchingIndexingMap(input), summed));
      reads.push_back(arg);
    }
    OpOperand *init = reduction.getDpsInitOperand(0);
    maps.push_back(AffineMap::getMultiDimIdentityMap(
        reduction.getNumLoops() - 1, rewriter.getContext()));
    SmallVector<utils::IteratorType> iterators(reduction.getNumLoops() - 1,
                                               utils::IteratorType::parallel);
    int64_t size = reduction.getStaticLoopRanges()[*dim];

    llvm::SmallPtrSet<Operation *, 8> skipped(oneHot->chain.begin(),
                                              oneHot->chain.end());
    skipped.insert(oneHot->pick);
    skipped.insert(oneHot->pick.getCondition().getDefiningOp());
    Block &body = producer.getRegion().front();
    auto build = [&](OpBuilder &b, Location loc, ValueRange args) {
      IRMapping mapping;
      for (auto [read, arg] : llvm::zip(reads, args))
        mapping.map(read, arg);
      for (Operation &op : body.without_terminator()) {
        if (skipped.contains(&op))
          continue;
        if (auto index = dyn_cast<linalg::IndexOp>(op)) {
          if (index.getDim() == *dim)
            continue;
          unsigned shifted = index.getDim() - (index.getDim() > *dim);
          mapping.map(index.getResult(),
                      linalg::IndexOp::create(b, loc, shifted).getResult());
          continue;
        }
        b.clone(op, mapping);
      }
      // f(value): the chain from the select to the yield.
      auto applyChain = [&](Value value) {
        IRMapping chain = mapping;
        chain.map(oneHot->pick.getResult(), value);
        for (Operation *op : oneHot->chain)
          b.clone(*op, chain);
        return oneHot->chain.empty()
                   ? value
                   : chain.lookup(oneHot->chain.back()->getResult(0));
      };
      Value hit =
          applyChain(mapping.lookupOrDefault(oneHot->pick.getTrueValue()));
      Value miss =
          applyChain(mapping.lookupOrDefault(oneHot->pick.getFalseValue()));
      Value at = mapping.lookupOrDefault(oneHot->matched);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value end = arith::ConstantIndexOp::create(b, loc, size);
      Value inRange = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, at, zero),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, at, end));
      Value sum = arith::AddFOp::create(
          b, loc, args.back(),
          arith::SelectOp::create(b, loc, inRange, hit, miss));
      Value missIsNaN =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, miss, miss);
      linalg::YieldOp::create(
          b, loc,
          ValueRange{arith::SelectOp::create(b, loc, missIsNaN, miss, sum)});
    };
    auto folded = linalg::GenericOp::create(
        rewriter, reduction.getLoc(), reduction->getResultTypes(), inputs,
        ValueRange{init->get()}, maps, iterators, build);
    folded->setDiscardableAttrs(reduction->getDiscardableAttrDictionary());
    rewriter.replaceOp(reduction, folded->getResults());
    return success();
  }
};

} // namespace

void mlir::zshard::populateFoldOneHotSumPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldOneHotSum>(patterns.getContext());
}
