//===- Remat.cpp - --zshard-remat -----------------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Activation checkpointing: the saved activations of a checkpointed block
/// are recomputed in backward by clones of the forward ops that made them.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/Microbatches.h"
#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/PhaseAnalysis.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Support/TypeBytes.h"
#include "zshard/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_REMAT
#include "zshard/Transforms/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

constexpr StringLiteral kRemat = "zshard.remat";

/// A block's forward ops, in order.
struct RematBlock {
  std::string name;
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 16> opSet;
};

/// The block `path` lies in under `pattern` (split at dots), if any.
std::optional<std::string> blockOf(StringRef path,
                                   ArrayRef<StringRef> pattern) {
  return matchPathPattern(path, pattern, /*proper=*/false);
}

int64_t tensorBytes(Value value) {
  if (!isa<RankedTensorType>(value.getType()))
    return 0;
  return getStaticBytes(value.getType()).value_or(0);
}

/// Floating-point operations of `op`, roughly: two per iteration of a loop
/// nest with reductions (a multiply and an add), one per iteration else.
int64_t flopsOf(Operation *op) {
  // Attention: QK^T and PV on the causal half, 2 B H T^2 D.
  if (auto attention = dyn_cast<CausalAttentionOp>(op)) {
    ArrayRef<int64_t> q = attention.getQ().getType().getShape();
    return 2 * q[0] * q[1] * q[2] * q[2] * q[3];
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return 0;
  int64_t iterations = 1;
  for (int64_t range : linalgOp.getStaticLoopRanges())
    iterations *= ShapedType::isDynamic(range) ? 1 : range;
  return linalgOp.getNumReductionLoops() ? 2 * iterations : iterations;
}

/// A matrix product, whose output `selective` keeps rather than recomputes;
/// attention counts as one (its out and lse are small, its products not).
bool isMatrixProduct(Operation *op) {
  if (isa<CausalAttentionOp>(op))
    return true;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalg::isaContractionOpInterface(linalgOp);
}

struct RematPass : public mlir::zshard::impl::RematBase<RematPass> {
  using RematBase::RematBase;
  void runOnOperation() override;

  /// What checkpointing `block` recomputes (in block order) and the forward
  /// values its backward users then read instead of the saved ones.
  SmallVector<Operation *> recomputeSet(const RematBlock &block,
                                        ArrayRef<Value> saved);

  // Per-run state.
  PhaseAnalysis *phases = nullptr;
  bool selective = false;
};

/// Whether `op` (top-level) belongs to backward or the optimizer.
bool afterForward(PhaseAnalysis &phases, Operation *op) {
  std::optional<Phase> phase = phases.getPhase(op);
  return phase && *phase != Phase::Forward;
}

/// Moves each memory-free backward op that sits inside the forward (before
/// the last forward op) down to right before its first user. The exporter
/// writes such ops where torch computed them: LayerNorm's saved statistics
/// reshaped for its backward, right after the forward op. Left there, they
/// would read a checkpointed block's values before its forward ends and no
/// block could be recomputed. Users move first, so a chain moves together.
/// Returns how many ops moved.
int64_t sinkEarlyBackward(Block &body, PhaseAnalysis &phases) {
  Operation *lastForward = nullptr;
  for (Operation &op : body.without_terminator())
    if (phases.getPhase(&op) == Phase::Forward)
      lastForward = &op;
  if (!lastForward)
    return 0;
  SmallVector<Operation *> early;
  for (Operation &op : body.without_terminator()) {
    if (&op == lastForward)
      break;
    if (afterForward(phases, &op) && isMemoryEffectFree(&op))
      early.push_back(&op);
  }
  int64_t moved = 0;
  for (Operation *op : llvm::reverse(early)) {
    Operation *firstUser = nullptr;
    for (Operation *user : op->getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && (!firstUser || top->isBeforeInBlock(firstUser)))
        firstUser = top;
    }
    if (!firstUser || firstUser == op->getNextNode())
      continue;
    op->moveBefore(firstUser);
    ++moved;
  }
  return moved;
}

SmallVector<Operation *> RematPass::recomputeSet(const RematBlock &block,
                                                 ArrayRef<Value> saved) {
  llvm::SmallPtrSet<Operation *, 16> set;
  SmallVector<Operation *> worklist;
  for (Value value : saved)
    worklist.push_back(value.getDefiningOp());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!op || !block.opSet.contains(op) || !set.insert(op).second)
      continue;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && selective && isMatrixProduct(def))
        continue; // kept saved
      worklist.push_back(def);
    }
  }
  SmallVector<Operation *> ordered;
  for (Operation *op : block.ops)
    if (set.contains(op))
      ordered.push_back(op);
  return ordered;
}

void RematPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fail = [&](const Twine &message) {
    emitError(getReportLoc(module), "zshard-remat: ") << message;
    signalPassFailure();
  };
  // The policy was checked when the option was parsed (RematOptions.h).
  const RematPolicy &rematPolicy = policy;
  bool none = rematPolicy.isNone();
  selective = rematPolicy.kind == RematPolicy::Kind::Selective;

  StepContract contract(module);
  if (failed(contract.run()))
    return signalPassFailure();
  func::FuncOp step = contract.getStep();
  Block &body = step.front();
  if (!none && getNumMicrobatches(step) > 1)
    return fail("the step accumulates " + Twine(getNumMicrobatches(step)) +
                " microbatches; checkpoint it before zshard-accumulate, so "
                "that each microbatch recomputes its blocks in its own "
                "backward");
  PhaseAnalysis phaseAnalysis(step);
  if (failed(phaseAnalysis.run()))
    return fail("cannot derive the phases of the step");
  phases = &phaseAnalysis;

  if (!none)
    numSunk += sinkEarlyBackward(body, phaseAnalysis);

  std::optional<SmallVector<StringRef>> patternParts =
      parsePathPattern(pattern);
  if (!patternParts)
    return fail("bad module path pattern '" + pattern +
                "' (dotted names, indices and <i>, such as h.<i>)");
  llvm::MapVector<StringRef, RematBlock> blocksByName;
  std::set<std::string> names;
  for (Operation &op : body.without_terminator()) {
    if (phaseAnalysis.getPhase(&op) != Phase::Forward)
      continue;
    std::optional<std::string> name =
        blockOf(getModulePath(&op), *patternParts);
    if (!name)
      continue;
    StringRef key = *names.insert(*name).first;
    RematBlock &block = blocksByName[key];
    block.name = *name;
    block.ops.push_back(&op);
    block.opSet.insert(&op);
  }
  SmallVector<RematBlock *> blocks;
  for (auto &entry : blocksByName)
    blocks.push_back(&entry.second);
  if (blocks.empty() && !none)
    return fail("pattern '" + pattern +
                "' matches no forward op; no block to checkpoint (" +
                describeBlockPatterns(step) + ")");

  // The values each block's forward keeps for backward.
  auto savedOf = [&](const RematBlock &block) {
    SmallVector<Value> saved;
    for (Operation *op : block.ops)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              Operation *top = body.findAncestorOpInBlock(*user);
              return top && afterForward(phaseAnalysis, top);
            }))
          if (!(selective && isMatrixProduct(op)))
            saved.push_back(result);
    return saved;
  };

  // Which blocks.
  llvm::SmallPtrSet<RematBlock *, 8> chosen;
  if (!blocks.empty() && !this->blocks.empty()) {
    for (StringRef name : this->blocks) {
      auto it = blocksByName.find(name.trim());
      if (it == blocksByName.end()) {
        SmallVector<StringRef> known;
        for (RematBlock *block : blocks)
          known.push_back(block->name);
        return fail("blocks names '" + name.trim() +
                    "', which is not a block of pattern '" + pattern +
                    "' (its blocks are " + llvm::join(known, ", ") + ")");
      }
      chosen.insert(&it->second);
    }
  } else if (rematPolicy.kind == RematPolicy::Kind::Budget) {
    int64_t budget = rematPolicy.budget;
    // Bytes alive across the forward/backward boundary with `set`
    // checkpointed: every forward value a backward op (or a clone) reads.
    auto boundaryBytes = [&](const llvm::SmallPtrSet<RematBlock *, 8> &set) {
      llvm::SetVector<Value> live;
      for (RematBlock *block : blocks) {
        SmallVector<Value> saved = savedOf(*block);
        if (!set.contains(block)) {
          live.insert(saved.begin(), saved.end());
          continue;
        }
        SmallVector<Operation *> ops = recomputeSet(*block, saved);
        llvm::SmallPtrSet<Operation *, 16> inSet(ops.begin(), ops.end());
        for (Operation *op : ops)
          for (Value operand : op->getOperands())
            if (Operation *def = operand.getDefiningOp())
              if (!inSet.contains(def) &&
                  phaseAnalysis.getPhase(def) == Phase::Forward &&
                  !isa<arith::ConstantOp>(def))
                live.insert(operand);
      }
      // Saved values outside any block (the embedding, the head).
      for (Operation &op : body.without_terminator()) {
        if (phaseAnalysis.getPhase(&op) != Phase::Forward)
          continue;
        bool inBlock = llvm::any_of(
            blocks, [&](RematBlock *b) { return b->opSet.contains(&op); });
        if (inBlock)
          continue;
        for (Value result : op.getResults())
          if (llvm::any_of(result.getUsers(), [&](Operation *user) {
                Operation *top = body.findAncestorOpInBlock(*user);
                return top && afterForward(phaseAnalysis, top);
              }))
            live.insert(result);
      }
      int64_t bytes = 0;
      for (Value v : live)
        bytes += tensorBytes(v);
      return bytes;
    };
    auto flopsOfBlock = [&](RematBlock *block) {
      int64_t flops = 0;
      for (Operation *op : recomputeSet(*block, savedOf(*block)))
        flops += flopsOf(op);
      return std::max<int64_t>(flops, 1);
    };
    int64_t current = boundaryBytes(chosen);
    while (current > budget) {
      RematBlock *best = nullptr;
      double bestRatio = 0;
      int64_t bestBytes = current;
      for (RematBlock *block : blocks) {
        if (chosen.contains(block))
          continue;
        llvm::SmallPtrSet<RematBlock *, 8> trial = chosen;
        trial.insert(block);
        int64_t bytes = boundaryBytes(trial);
        double ratio = double(current - bytes) / double(flopsOfBlock(block));
        if (bytes < current && (!best || ratio > bestRatio)) {
          best = block;
          bestRatio = ratio;
          bestBytes = bytes;
        }
      }
      if (!best)
        return fail("budget=" + Twine(budget) + " bytes cannot be met: with " +
                    Twine(chosen.size()) + " of " + Twine(blocks.size()) +
                    " blocks checkpointed " + Twine(current) +
                    " bytes of activations still live across forward and "
                    "backward, " +
                    Twine(current - budget) + " bytes too many");
      chosen.insert(best);
      current = bestBytes;
    }
    SmallVector<StringRef> picked;
    for (RematBlock *block : blocks)
      if (chosen.contains(block))
        picked.push_back(block->name);
    emitRemark(getReportLoc(module))
        << "zshard-remat: budget=" << budget << " bytes: checkpointing "
        << chosen.size() << " of " << blocks.size() << " blocks ("
        << llvm::join(picked, ", ") << "); " << current
        << " bytes of activations live across forward and "
           "backward";
  } else if (!none) {
    int64_t every =
        rematPolicy.kind == RematPolicy::Kind::Every ? rematPolicy.every : 1;
    for (auto [i, block] : llvm::enumerate(blocks))
      if (i % every == 0)
        chosen.insert(block);
  }

  // Checkpoint each chosen block.
  for (RematBlock *block : blocks) {
    if (!chosen.contains(block))
      continue;
    SmallVector<Value> saved = savedOf(*block);
    if (saved.empty())
      continue;
    SmallVector<Operation *> ops = recomputeSet(*block, saved);
    // Right before the first op after forward that reads a saved value.
    Operation *first = nullptr;
    for (Value value : saved)
      for (Operation *user : value.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        if (top && afterForward(phaseAnalysis, top) &&
            (!first || top->isBeforeInBlock(first)))
          first = top;
      }
    if (!first || !ops.back()->isBeforeInBlock(first)) {
      emitRemark(getReportLoc(block->ops.front()))
          << "zshard-remat: block '" << block->name
          << "' is read by backward before its forward ends; not checkpointed";
      continue;
    }
    OpBuilder builder(first);
    IRMapping mapping;
    auto tag = builder.getStringAttr(block->name);
    for (Operation *op : ops) {
      Operation *clone = builder.clone(*op, mapping);
      clone->setAttr(kRemat, tag);
      ++numCloned;
    }
    for (Value value : saved)
      value.replaceUsesWithIf(mapping.lookup(value), [&](OpOperand &use) {
        Operation *top = body.findAncestorOpInBlock(*use.getOwner());
        return top && !top->hasAttr(kRemat) &&
               afterForward(phaseAnalysis, top);
      });
    ++numBlocks;
  }
}

} // namespace
