//===- LocalizeInits.cpp - --zshard-localize-inits ------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/StepContract.h"
#include "zshard/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_LOCALIZEINITS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// Whether `op` makes an init that carries no data of its own: a
/// tensor.empty, or a linalg.fill of one with a value defined outside it.
bool isInit(Operation *op) {
  if (isa<tensor::EmptyOp>(op))
    return true;
  auto fill = dyn_cast<linalg::FillOp>(op);
  return fill && fill.hasPureTensorSemantics() &&
         fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
}

struct LocalizeInitsPass
    : public mlir::zshard::impl::LocalizeInitsBase<LocalizeInitsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &block = func.getBody().front();
    // Fills first (their tensor.empty becomes unused or stays for others),
    // then the empties; each from the last so copies are not revisited.
    SmallVector<Operation *> inits;
    for (Operation &op : block)
      if (isInit(&op))
        inits.push_back(&op);
    llvm::stable_sort(inits, [](Operation *a, Operation *b) {
      return isa<linalg::FillOp>(a) && !isa<linalg::FillOp>(b);
    });
    for (Operation *init : inits) {
      Value result = init->getResult(0);
      // The top-level users, each with the uses it makes.
      llvm::MapVector<Operation *, SmallVector<OpOperand *>> users;
      for (OpOperand &use : result.getUses())
        if (Operation *top = block.findAncestorOpInBlock(*use.getOwner()))
          users[top].push_back(&use);
      if (users.empty())
        continue;
      bool next = users.size() == 1 && init->getNextNode() == users.front().first;
      if (next)
        continue;
      for (auto &[top, uses] : users) {
        OpBuilder builder(top);
        IRMapping mapping;
        Operation *copy = builder.clone(*init, mapping);
        // The copy belongs to its user's phase (zshard-annotate-phases ran
        // on the shared init, which took its earliest user's).
        if (Attribute phase = top->getAttr(contract::kPhase))
          copy->setAttr(contract::kPhase, phase);
        for (OpOperand *use : uses)
          use->set(copy->getResult(0));
        ++numCopies;
      }
      if (init->use_empty())
        init->erase();
    }
  }
};

} // namespace
