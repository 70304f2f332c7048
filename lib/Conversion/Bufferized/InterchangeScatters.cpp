//===- InterchangeScatters.cpp - --zshard-interchange-scatters ------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// A scatter-add (an embedding's backward, index_put with accumulate) comes
// from the exporter and zshard-gen as an scf.forall over the feature
// columns, each walking the tokens in order (repeated indices accumulate,
// race-free: a GPU runs one thread a column):
//
//   scf.forall (%j) in (256) {
//     %col = memref.subview %acc[0, %j] [rows, 1] [1, 1]
//     scf.for %t ... {
//       %row = <from memref.load %ids[%t]>
//       %v = memref.load %dout[%t, %j]
//       memref.store (memref.load %col[%row]) + %v, %col[%row]
//     } }
//
// Run serially on a CPU, that reads one float a row of dout per pass over
// the tokens, 256 passes, each float of acc's row on its own. Here the
// forall becomes the innermost loop, under the loops it held:
//
//   scf.for %t ... {
//     %row = <from memref.load %ids[%t]>           (hoisted out of %j)
//     scf.for %j = 0 to 256 { %col = subview ...; %v = ...; store ... }
//   }
//
// so that a token's row of dout and of acc is walked contiguously and
// vectorises. The forall's iterations touch disjoint elements (it is a
// parallel loop), and for each column the tokens still come in their order:
// every element of acc receives the same additions in the same order, the
// same result bit for bit.
//
// The forall must have no results, hold the loop nest and, before it, only
// ops without memory effects (the column's subview), after it only unused
// ones; the nest's loops must be perfectly nested, without iter_args, with
// bounds defined outside the forall. Ops of the innermost body that do not
// depend on the forall's indices move out of the new innermost loops when
// they have no memory effects, or are loads of a buffer the body does not
// store to while every buffer it stores to is an allocation of the step
// (which no other buffer can alias), and the forall's bounds are constants
// with at least one iteration (a load moved out runs even when the loops
// it left would not).
//
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "zshard/Support/ViewRoot.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_INTERCHANGESCATTERS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// The perfectly nested scf.for loops the forall's body holds, outermost
/// first, and the pure ops before them; empty when the body has another
/// shape.
struct ForallNest {
  SmallVector<Operation *> prefix;
  SmallVector<scf::ForOp> loops;
};

ForallNest matchNest(scf::ForallOp forall) {
  ForallNest nest;
  if (forall->getNumResults() != 0)
    return {};
  scf::ForOp outer;
  for (Operation &op : forall.getBody()->without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && !outer) {
      outer = loop;
      continue;
    }
    if (!isMemoryEffectFree(&op) || op.getNumRegions() != 0)
      return {};
    if (!outer)
      nest.prefix.push_back(&op);
    else if (!op.use_empty())
      return {};
  }
  if (!outer)
    return {};
  for (scf::ForOp loop = outer; loop;) {
    if (!loop.getInitArgs().empty() ||
        !forall.isDefinedOutsideOfLoop(loop.getLowerBound()) ||
        !forall.isDefinedOutsideOfLoop(loop.getUpperBound()) ||
        !forall.isDefinedOutsideOfLoop(loop.getStep()))
      return {};
    nest.loops.push_back(loop);
    Block *body = loop.getBody();
    scf::ForOp inner;
    if (llvm::hasSingleElement(body->without_terminator()))
      inner = dyn_cast<scf::ForOp>(body->front());
    loop = inner;
  }
  return nest;
}

/// The buffers `body` stores to, as view roots, if every one is a
/// memref.alloc; nullopt otherwise.
std::optional<llvm::SmallPtrSet<Value, 4>> allocatedStores(Block *body) {
  llvm::SmallPtrSet<Value, 4> roots;
  WalkResult result = body->walk([&](Operation *op) {
    if (isMemoryEffectFree(op) || isa<memref::LoadOp>(op))
      return WalkResult::advance();
    auto store = dyn_cast<memref::StoreOp>(op);
    if (!store)
      return WalkResult::interrupt();
    Value root = getViewRoot(store.getMemRef());
    if (!root.getDefiningOp<memref::AllocOp>())
      return WalkResult::interrupt();
    roots.insert(root);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return std::nullopt;
  return roots;
}

/// Moves the ops of `inner`'s body that do not depend on values defined in
/// `inner` (the outermost of the loops made from the forall) before it,
/// where they have no memory effects or load from a buffer the body does
/// not store to (every buffer it stores to being an allocation).
void hoistInvariants(scf::ForOp inner, Block *body) {
  std::optional<llvm::SmallPtrSet<Value, 4>> stored = allocatedStores(body);
  auto definedOutside = [&](Value value) {
    return inner.isDefinedOutsideOfLoop(value);
  };
  for (Operation &op : llvm::make_early_inc_range(body->without_terminator())) {
    if (op.getNumRegions() != 0 ||
        !llvm::all_of(op.getOperands(), definedOutside))
      continue;
    bool movable = isMemoryEffectFree(&op);
    if (auto load = dyn_cast<memref::LoadOp>(op))
      movable = stored && !stored->contains(getViewRoot(load.getMemRef()));
    if (movable)
      op.moveBefore(inner);
  }
}

void interchange(scf::ForallOp forall, const ForallNest &nest) {
  OpBuilder b(forall);
  Location loc = forall.getLoc();
  IRMapping mapping;
  // The nest's loops, now outside.
  for (scf::ForOp loop : nest.loops) {
    auto copy = scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                                   loop.getUpperBound(), loop.getStep());
    // The outermost loop stands where the forall stood, with its attributes
    // (its phase).
    copy->setDiscardableAttrs(loop == nest.loops.front()
                                  ? forall->getDiscardableAttrDictionary()
                                  : loop->getDiscardableAttrDictionary());
    mapping.map(loop.getInductionVar(), copy.getInductionVar());
    b.setInsertionPoint(copy.getBody()->getTerminator());
  }
  // The forall's dimensions, innermost.
  scf::ForOp firstInner;
  SmallVector<Value> lbs =
      getValueOrCreateConstantIndexOp(b, loc, forall.getMixedLowerBound());
  SmallVector<Value> ubs =
      getValueOrCreateConstantIndexOp(b, loc, forall.getMixedUpperBound());
  SmallVector<Value> steps =
      getValueOrCreateConstantIndexOp(b, loc, forall.getMixedStep());
  for (auto [iv, lb, ub, step] :
       llvm::zip(forall.getInductionVars(), lbs, ubs, steps)) {
    auto loop = scf::ForOp::create(b, loc, lb, ub, step);
    if (!firstInner)
      firstInner = loop;
    mapping.map(iv, loop.getInductionVar());
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  Block *innermost = b.getInsertionBlock();
  for (Operation *op : nest.prefix)
    b.clone(*op, mapping);
  scf::ForOp innermostLoop = nest.loops.back();
  for (Operation &op : innermostLoop.getBody()->without_terminator())
    b.clone(op, mapping);
  // A load moved out of the column loops runs even when they would not:
  // only where they run at least once.
  bool runs = llvm::all_of(
      llvm::zip(forall.getMixedLowerBound(), forall.getMixedUpperBound()),
      [](auto bounds) {
        std::optional<int64_t> lb = getConstantIntValue(std::get<0>(bounds));
        std::optional<int64_t> ub = getConstantIntValue(std::get<1>(bounds));
        return lb && ub && *lb < *ub;
      });
  forall.erase();
  if (runs)
    hoistInvariants(firstInner, innermost);
}

struct InterchangeScattersPass
    : public mlir::zshard::impl::InterchangeScattersBase<
          InterchangeScattersPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> foralls;
    getOperation()->walk(
        [&](scf::ForallOp forall) { foralls.push_back(forall); });
    for (scf::ForallOp forall : foralls) {
      ForallNest nest = matchNest(forall);
      if (nest.loops.empty())
        continue;
      interchange(forall, nest);
      ++numInterchanged;
    }
  }
};

} // namespace
