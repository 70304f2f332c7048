//===- Prefetch.cpp - --zshard-prefetch -----------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Schedules the start/wait pairs of a sharded step: waits just before the
/// first use, all-gathers started ahead by phase (forward depth, backward
/// pre/post/none) under an in-flight limit, small forward gathers merged
/// into buckets. The step is one block, so "every path" is the block's
/// order and the in-flight count is exact.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/PhaseAnalysis.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_PREFETCH
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// One all-gather pair and the extent of its buffer's life.
struct Gather {
  AllGatherStartOp start;
  WaitOp wait;
  /// The unit's release, or the last top-level user of the buffer.
  Operation *end = nullptr;
  Phase phase = Phase::Forward;
};

/// The top-level ops using `value`, first and last.
std::pair<Operation *, Operation *> userRange(Value value, Block &block) {
  Operation *first = nullptr, *last = nullptr;
  for (Operation *user : value.getUsers()) {
    Operation *top = block.findAncestorOpInBlock(*user);
    if (!top)
      continue;
    if (!first || top->isBeforeInBlock(first))
      first = top;
    if (!last || last->isBeforeInBlock(top))
      last = top;
  }
  return {first, last};
}

/// The last top-level op using `value` or a tensor view of it (slices and
/// reshapes, which bufferize to views of the same buffer).
Operation *lastViewUse(Value value, Block &block) {
  Operation *last = nullptr;
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top)
        continue;
      if (!last || last->isBeforeInBlock(top))
        last = top;
      if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
              tensor::CollapseShapeOp, tensor::CastOp>(user))
        worklist.push_back(user->getResult(0));
    }
  }
  return last;
}

/// Whether `a` comes at or before `b` in their block.
bool atOrBefore(Operation *a, Operation *b) {
  return a == b || a->isBeforeInBlock(b);
}

struct PrefetchPass : public mlir::zshard::impl::PrefetchBase<PrefetchPass> {
  using PrefetchBase::PrefetchBase;
  void runOnOperation() override;

  /// Merges consecutive small gathers of one phase into buckets: one
  /// collective over their concatenated shards, sliced back after the wait.
  void bucket(SmallVector<Gather> &gathers);

  /// Moves `g`'s start to just before `before`, within its bounds and the
  /// in-flight limit.
  void place(Gather &g, Operation *before, ArrayRef<Gather *> all,
             Operation *notBefore);
};

/// Gathers other than `self` whose buffer is live at `point` (started
/// before it, not yet ended).
SmallVector<Gather *> liveAt(Operation *point, ArrayRef<Gather *> all,
                             const Gather *self) {
  SmallVector<Gather *> live;
  for (Gather *g : all)
    if (g != self && g->start->isBeforeInBlock(point) &&
        atOrBefore(point, g->end))
      live.push_back(g);
  return live;
}

void PrefetchPass::place(Gather &g, Operation *before, ArrayRef<Gather *> all,
                         Operation *notBefore) {
  Operation *original = g.start->getNextNode();
  // Bounds: after the previous gather of the unit ended, after the input is
  // defined, and no later than the wait.
  if (notBefore && atOrBefore(before, notBefore))
    before = notBefore->getNextNode();
  if (Operation *def = g.start.getInput().getDefiningOp())
    if (def->getBlock() == g.start->getBlock() && atOrBefore(before, def))
      before = def->getNextNode();
  if (g.wait->isBeforeInBlock(before))
    before = g.wait;
  // The in-flight limit: wait for the earliest live buffer to end.
  bool delayed = false;
  if (maxInflight > 0) {
    while (before != g.wait.getOperation()) {
      SmallVector<Gather *> live = liveAt(before, all, &g);
      if (int64_t(live.size()) < maxInflight)
        break;
      Operation *earliest = nullptr;
      for (Gather *other : live)
        if (!earliest || other->end->isBeforeInBlock(earliest))
          earliest = other->end;
      before = earliest->getNextNode();
      delayed = true;
      if (g.wait->isBeforeInBlock(before))
        before = g.wait;
    }
    if (int64_t(liveAt(before, all, &g).size()) >= maxInflight)
      emitWarning(getReportLoc(g.start))
          << "zshard-prefetch: " << liveAt(before, all, &g).size()
          << " other gathered units are still live where this unit is "
             "needed, so max-inflight="
          << int64_t(maxInflight)
          << " cannot hold here (they are not released before)";
  }
  if (before != original) {
    bool earlier = before->isBeforeInBlock(original);
    g.start->moveBefore(before);
    numHoisted += earlier;
  }
  numDelayed += delayed;
}

void PrefetchPass::bucket(SmallVector<Gather> &gathers) {
  auto bytes = [](Gather &g) {
    return cast<CollectiveOpInterface>(g.start.getOperation())
        .getResultBytes();
  };
  auto compatible = [](Gather &a, Gather &b) {
    return a.phase == b.phase && a.start.getGridAttr() == b.start.getGridAttr() &&
           a.start.getGridAxes() == b.start.getGridAxes() &&
           a.start.getInput().getType().getElementType() ==
               b.start.getInput().getType().getElementType();
  };
  // Buckets of consecutive gathers (in need order) that are each small and
  // together fit the threshold.
  SmallVector<SmallVector<unsigned>> buckets;
  for (unsigned i = 0; i < gathers.size(); ++i) {
    if (bytes(gathers[i]) >= bucketBytes)
      continue;
    if (!buckets.empty() && buckets.back().back() + 1 == i &&
        compatible(gathers[buckets.back().front()], gathers[i])) {
      int64_t total = 0;
      for (unsigned j : buckets.back())
        total += bytes(gathers[j]);
      if (total + bytes(gathers[i]) <= bucketBytes) {
        buckets.back().push_back(i);
        continue;
      }
    }
    buckets.push_back({i});
  }

  SmallVector<Gather> result;
  unsigned next = 0;
  for (ArrayRef<unsigned> members : buckets) {
    for (; next < members.front(); ++next)
      result.push_back(gathers[next]);
    next = members.back() + 1;
    if (members.size() == 1) {
      result.push_back(gathers[members.front()]);
      continue;
    }
    Gather &first = gathers[members.front()];
    OpBuilder builder(first.wait);
    Location loc = first.start.getLoc();
    MLIRContext *ctx = builder.getContext();
    Type element = first.start.getInput().getType().getElementType();
    SmallVector<int64_t> offsets, sizes;
    int64_t shard = 0;
    for (unsigned j : members) {
      offsets.push_back(shard);
      sizes.push_back(gathers[j].start.getInput().getType().getNumElements());
      shard += sizes.back();
    }
    int64_t group =
        first.wait.getResult().getType().getNumElements() / sizes.front();
    // This rank's shards side by side, gathered as one buffer.
    Value flat = tensor::EmptyOp::create(builder, loc, {shard}, element);
    for (auto [j, offset, size] : llvm::zip(members, offsets, sizes))
      flat = tensor::InsertSliceOp::create(
          builder, loc, gathers[j].start.getInput(), flat,
          ArrayRef<OpFoldResult>{builder.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(size)},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
    auto full = RankedTensorType::get({group * shard}, element);
    auto start = AllGatherStartOp::create(
        builder, loc, TokenType::get(ctx, full), flat,
        first.start.getGridAttr(),
        builder.getDenseI64ArrayAttr(first.start.getGridAxes()),
        FlatSymbolRefAttr());
    auto wait = WaitOp::create(builder, loc, full, start);
    // Rank r's part of the buffer holds every member's shard r: member j's
    // gathered buffer is column block j of the [group, shard] view.
    Value rows = tensor::ExpandShapeOp::create(
        builder, loc, RankedTensorType::get({group, shard}, element), wait,
        ArrayRef<ReassociationIndices>{{0, 1}});
    SmallVector<Value> units;
    for (auto [j, offset, size] : llvm::zip(members, offsets, sizes)) {
      Value block = tensor::ExtractSliceOp::create(
          builder, loc, RankedTensorType::get({group, size}, element), rows,
          ArrayRef<OpFoldResult>{builder.getIndexAttr(0),
                                 builder.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(group),
                                 builder.getIndexAttr(size)},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(1),
                                 builder.getIndexAttr(1)});
      units.push_back(tensor::CollapseShapeOp::create(
          builder, loc, gathers[j].wait.getResult().getType(), block,
          ArrayRef<ReassociationIndices>{{0, 1}}));
    }
    for (auto [j, unit] : llvm::zip(members, units)) {
      // The member's release named its own gather; the slice is a buffer
      // of its own, freed after its last use.
      for (Operation *user :
           llvm::make_early_inc_range(gathers[j].wait.getResult().getUsers()))
        if (isa<ReleaseOp>(user))
          user->erase();
      gathers[j].wait.getResult().replaceAllUsesWith(unit);
      gathers[j].wait->erase();
      gathers[j].start->erase();
    }
    Block &block = *wait->getBlock();
    Operation *lastSlice = units.back().getDefiningOp();
    Gather merged{start, wait, nullptr, first.phase};
    OpBuilder after(lastSlice->getBlock(), ++Block::iterator(lastSlice));
    ReleaseOp::create(after, loc, wait.getResult());
    // The members' buffers (copies out of the bucket) live until the last
    // member's last use.
    merged.end = lastViewUse(rows, block);
    result.push_back(merged);
    ++numBuckets;
  }
  for (; next < gathers.size(); ++next)
    result.push_back(gathers[next]);
  gathers = std::move(result);
}

void PrefetchPass::runOnOperation() {
  if (forwardDepth < 0 || maxInflight < 0 || bucketBytes < 0) {
    emitError(getReportLoc(getOperation()),
              "zshard-prefetch: forward-depth, max-inflight "
              "and bucket-bytes must not be negative");
    return signalPassFailure();
  }
  StepContract contract(getOperation());
  if (failed(contract.run()))
    return signalPassFailure();
  func::FuncOp step = contract.getStep();
  Block &block = step.front();

  // 1. Waits just before the first use of what they deliver.
  for (WaitOp wait : llvm::to_vector(block.getOps<WaitOp>())) {
    Operation *first = userRange(wait.getResult(), block).first;
    if (first && wait->isBeforeInBlock(first) && wait->getNextNode() != first)
      wait->moveBefore(first);
  }

  // Reductions in flight one at a time: a reduce-scatter or all-reduce is
  // waited for before the next one starts at the latest, so their inputs
  // (whole unit gradients) do not pile up until the optimizer.
  Operation *previousWait = nullptr;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (!isa<ReduceScatterStartOp, AllReduceStartOp>(op))
      continue;
    if (previousWait && op.isBeforeInBlock(previousWait))
      previousWait->moveBefore(&op);
    previousWait = nullptr;
    for (Operation *user : op.getResult(0).getUsers())
      if (isa<WaitOp>(user))
        previousWait = user;
  }

  PhaseAnalysis phases(step);
  if (failed(phases.run())) {
    emitError(getReportLoc(step),
              "zshard-prefetch: cannot derive the phases of the step");
    return signalPassFailure();
  }

  // 2. The gathers of forward and backward, in the order they are needed.
  SmallVector<Gather> gathers;
  for (WaitOp wait : block.getOps<WaitOp>()) {
    auto start = dyn_cast_or_null<AllGatherStartOp>(
        wait.getToken().getDefiningOp());
    if (!start || start->getBlock() != &block)
      continue;
    std::optional<Phase> phase = phases.getPhase(wait);
    if (!phase || *phase == Phase::Optimizer)
      continue;
    Gather g{start, wait, nullptr, *phase};
    for (Operation *user : wait.getResult().getUsers())
      if (isa<ReleaseOp>(user) && user->getBlock() == &block)
        g.end = user;
    if (!g.end)
      g.end = lastViewUse(wait.getResult(), block);
    if (!g.end)
      g.end = wait;
    gathers.push_back(g);
  }
  if (bucketBytes > 0)
    bucket(gathers);
  SmallVector<Gather *> all;
  for (Gather &g : gathers)
    all.push_back(&g);

  // The end of the previous gather of the same unit, which a new gather of
  // it may not overlap.
  auto previousEnd = [&](Gather &g) -> Operation * {
    Operation *end = nullptr;
    FlatSymbolRefAttr unit = g.start.getUnitAttr();
    if (!unit)
      return nullptr;
    for (Gather &other : gathers)
      if (&other != &g && other.start.getUnitAttr() == unit &&
          other.wait->isBeforeInBlock(g.wait) &&
          (!end || end->isBeforeInBlock(other.end)))
        end = other.end;
    return end;
  };

  for (Phase phase : {Phase::Forward, Phase::Backward}) {
    SmallVector<Gather *> list;
    for (Gather &g : gathers)
      if (g.phase == phase)
        list.push_back(&g);
    if (list.empty())
      continue;
    Operation *firstWait = list.front()->wait;
    for (auto [j, g] : llvm::enumerate(list)) {
      Operation *before = g->wait;
      if (phase == Phase::Forward) {
        if (forwardDepth > 0)
          before = j >= size_t(forwardDepth)
                       ? list[j - forwardDepth]->wait->getNextNode()
                       : firstWait;
      } else if (backward == BackwardPrefetch::Pre) {
        before = j >= 1 ? list[j - 1]->wait->getNextNode() : &block.front();
      } else if (backward == BackwardPrefetch::Post) {
        before = j >= 1 ? list[j - 1]->end->getNextNode() : &block.front();
      }
      place(*g, before, all, previousEnd(*g));
    }
  }
}

} // namespace
