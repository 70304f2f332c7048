//===- ZShardCanonicalize.cpp - zshard folds and canonical forms ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Collectives over a group of one rank fold away (with the releases of what
/// they gathered), and an async start waited on right away becomes the
/// synchronous collective.
///
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zshard;

/// True when `op` runs over a group of exactly one rank and its result has
/// the type of its input, so it is the identity.
static bool isTrivialCollective(CollectiveOpInterface op) {
  std::optional<int64_t> group =
      getStaticGroupSize(op, op.getGridAttr(), op.getGridAxes());
  return group && *group == 1 &&
         op.getInput().getType() == op.getResultTensorType();
}

/// Replaces the gathered buffer that `producer` yields by `replacement`,
/// erasing its releases first: without a gather there is nothing to release.
static void replaceGathered(PatternRewriter &rewriter, Operation *producer,
                            Value replacement) {
  for (Operation *user : llvm::make_early_inc_range(producer->getUsers()))
    if (isa<ReleaseOp>(user))
      rewriter.eraseOp(user);
  rewriter.replaceOp(producer, replacement);
}

namespace {

/// all_gather over one rank -> its input.
struct FoldTrivialAllGather : OpRewritePattern<AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllGatherOp op,
                                PatternRewriter &rewriter) const override {
    if (!isTrivialCollective(cast<CollectiveOpInterface>(op.getOperation())))
      return rewriter.notifyMatchFailure(op, "group is not a single rank");
    replaceGathered(rewriter, op, op.getInput());
    return success();
  }
};

/// wait(start(x)) over one rank -> x.
struct FoldTrivialAsync : OpRewritePattern<WaitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WaitOp wait,
                                PatternRewriter &rewriter) const override {
    CollectiveOpInterface start = wait.getStart();
    if (!start || !isTrivialCollective(start))
      return rewriter.notifyMatchFailure(wait, "group is not a single rank");
    Value input = start.getInput();
    replaceGathered(rewriter, wait, input);
    rewriter.eraseOp(start);
    return success();
  }
};

/// A wait placed right after its start hides nothing: use the sync form.
struct WaitRightAfterStart : OpRewritePattern<WaitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WaitOp wait,
                                PatternRewriter &rewriter) const override {
    CollectiveOpInterface start = wait.getStart();
    if (!start || start->getNextNode() != wait.getOperation())
      return rewriter.notifyMatchFailure(wait, "start is not right before");
    TypeRange resultType = wait->getResultTypes();
    ValueRange operands = start->getOperands();
    ArrayRef<NamedAttribute> attrs = start->getAttrs();
    Location loc = start->getLoc();
    Operation *sync =
        TypeSwitch<Operation *, Operation *>(start.getOperation())
            .Case([&](AllGatherStartOp) {
              return AllGatherOp::create(rewriter, loc, resultType, operands,
                                         attrs)
                  .getOperation();
            })
            .Case([&](ReduceScatterStartOp) {
              return ReduceScatterOp::create(rewriter, loc, resultType,
                                             operands, attrs)
                  .getOperation();
            })
            .Case([&](AllReduceStartOp) {
              return AllReduceOp::create(rewriter, loc, resultType, operands,
                                         attrs)
                  .getOperation();
            });
    rewriter.replaceOp(wait, sync->getResults());
    rewriter.eraseOp(start);
    return success();
  }
};

} // namespace

void AllGatherOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldTrivialAllGather>(context);
}

void WaitOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FoldTrivialAsync, WaitRightAfterStart>(context);
}

OpFoldResult ReduceScatterOp::fold(FoldAdaptor) {
  if (isTrivialCollective(cast<CollectiveOpInterface>(getOperation())))
    return getInput();
  return {};
}

OpFoldResult AllReduceOp::fold(FoldAdaptor) {
  if (isTrivialCollective(cast<CollectiveOpInterface>(getOperation())))
    return getInput();
  return {};
}
