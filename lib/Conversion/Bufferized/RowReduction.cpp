//===- RowReduction.cpp - Row reductions on memrefs -----------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "RowReduction.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::zshard;

std::optional<RowReduction>
mlir::zshard::matchRowReduction(linalg::GenericOp op) {
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
  // An input that is the output would see the partial results.
  for (OpOperand *input : op.getDpsInputOperands())
    if (input->get() == init->get())
      return std::nullopt;

  Block &body = op.getRegion().front();
  BlockArgument acc = op.getMatchingBlockArgument(init);
  if (!acc.hasOneUse())
    return std::nullopt;
  Operation *combiner = *acc.getUsers().begin();
  if (combiner->getBlock() != &body || combiner->getNumOperands() != 2 ||
      combiner->getNumResults() != 1 || combiner->getNumRegions() != 0 ||
      !isMemoryEffectFree(combiner) ||
      body.getTerminator()->getOperand(0) != combiner->getResult(0) ||
      !combiner->getResult(0).hasOneUse())
    return std::nullopt;
  Value reduced = combiner->getOperand(0) == acc ? combiner->getOperand(1)
                                                 : combiner->getOperand(0);
  if (reduced == acc)
    return std::nullopt;

  unsigned bodyOps = 0;
  for (Operation &bodyOp : body.without_terminator()) {
    if (&bodyOp == combiner)
      continue;
    if (bodyOp.getNumRegions() != 0 || !isMemoryEffectFree(&bodyOp))
      return std::nullopt;
    ++bodyOps;
  }
  return RowReduction{op, combiner, reduced, bodyOps};
}

Value mlir::zshard::createEntryBuffer(const RowReduction &r, int64_t size,
                                      Type element) {
  linalg::GenericOp op = r.op;
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!func || func.isExternal())
    return nullptr;
  Block &entry = func.getFunctionBody().front();
  OpBuilder b(&entry, entry.begin());
  return memref::AllocaOp::create(b, op.getLoc(),
                                  MemRefType::get({size}, element));
}

SmallVector<Value> mlir::zshard::buildRowLoops(OpBuilder &b,
                                               const RowReduction &r,
                                               Value zero, Value one,
                                               Value innermostStep) {
  linalg::GenericOp op = r.op;
  Location loc = op.getLoc();
  SmallVector<Value> bounds;
  for (int64_t range : ArrayRef(op.getStaticLoopRanges()).drop_back())
    bounds.push_back(arith::ConstantIndexOp::create(b, loc, range));
  SmallVector<Value> ivs;
  for (Value bound : bounds) {
    Value step = innermostStep && bound == bounds.back() ? innermostStep : one;
    auto loop = scf::ForOp::create(b, loc, zero, bound, step);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
  }
  return ivs;
}

SmallVector<Value> mlir::zshard::applyIndexingMap(OpBuilder &b, Location loc,
                                                  AffineMap map,
                                                  ArrayRef<Value> dims) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, expr), dims));
  return indices;
}

Value mlir::zshard::emitReducedValue(OpBuilder &b, const RowReduction &r,
                                     ArrayRef<Value> dims) {
  linalg::GenericOp op = r.op;
  Location loc = op.getLoc();
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (!isa<MemRefType>(input->get().getType())) {
      mapping.map(arg, input->get());
      continue;
    }
    SmallVector<Value> indices =
        applyIndexingMap(b, loc, op.getMatchingIndexingMap(input), dims);
    mapping.map(arg, memref::LoadOp::create(b, loc, input->get(), indices));
  }
  for (Operation &bodyOp : op.getRegion().front().without_terminator()) {
    if (&bodyOp == r.combiner)
      continue;
    if (auto dim = dyn_cast<linalg::IndexOp>(bodyOp)) {
      mapping.map(dim.getResult(), dims[dim.getDim()]);
      continue;
    }
    b.clone(bodyOp, mapping);
  }
  return mapping.lookupOrDefault(r.reduced);
}

Value mlir::zshard::emitCombine(OpBuilder &b, const RowReduction &r, Value acc,
                                Value value) {
  linalg::GenericOp op = r.op;
  IRMapping mapping;
  mapping.map(op.getMatchingBlockArgument(op.getDpsInitOperand(0)), acc);
  mapping.map(r.reduced, value);
  return b.clone(*r.combiner, mapping)->getResult(0);
}
