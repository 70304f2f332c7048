//===- OutlineComputeOps.cpp - --zshard-outline-compute-ops ---------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Moves each top-level linalg op of a bufferized function into a private
/// function of its own, one function per structurally identical op: the
/// transformer blocks of a step, which differ only in their buffers, then
/// share their code, and what is lowered and compiled grows with the number
/// of distinct ops rather than with the depth of the model.
///
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/StepContract.h"
#include "zshard/Conversion/Passes.h"
#include "zshard/Support/ViewRoot.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_OUTLINECOMPUTEOPS
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `type` can be an argument of an outlined function: what the
/// bare-pointer calling convention passes as one pointer (a static shape
/// and the identity layout), or a scalar.
bool isPassable(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref.hasStaticShape() && memref.getLayout().isIdentity();
  return type.isIntOrIndexOrFloat();
}

/// The views an outlined op recomputes from their source (shape changes,
/// slices, transposes, casts): their other operands are constants, so an
/// identical op of another block takes the same view of its own buffer.
bool isClonedView(Operation *op) {
  if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp,
           memref::TransposeOp, memref::CastOp, memref::ReinterpretCastOp>(op))
    return false;
  return llvm::all_of(op->getOperands().drop_front(), [](Value operand) {
    return operand.getDefiningOp<arith::ConstantOp>();
  });
}

/// What one outlined op needs from its function: the values it takes as
/// arguments and the ops it clones (constants and views), in order.
struct OutlinedSlice {
  SmallVector<Value> arguments;
  SmallVector<Operation *> cloned;
};

/// Collects what `op` needs into `slice`: constants and views defined in
/// `op`'s block are cloned (their own operands collected first), any other
/// value becomes an argument. Fails when an argument cannot be passed.
LogicalResult collectSlice(Operation *op, OutlinedSlice &slice) {
  llvm::SetVector<Value> arguments;
  llvm::SetVector<Operation *> cloned;
  std::function<LogicalResult(Value)> visit = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (def && def->getBlock() == op->getBlock() &&
        (isa<arith::ConstantOp>(def) || isClonedView(def))) {
      if (cloned.contains(def))
        return success();
      for (Value operand : def->getOperands())
        if (failed(visit(operand)))
          return failure();
      cloned.insert(def);
      return success();
    }
    if (!isPassable(value.getType()))
      return failure();
    arguments.insert(value);
    return success();
  };
  for (Value operand : op->getOperands())
    if (failed(visit(operand)))
      return failure();
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  for (Value value : captured)
    if (failed(visit(value)))
      return failure();
  slice.arguments = arguments.takeVector();
  slice.cloned = cloned.takeVector();
  return success();
}

/// A hash of what `func` computes: its type and its ops, ignoring
/// locations, names and operands (operands are compared exactly when two
/// hashes meet).
llvm::hash_code hashBody(func::FuncOp func) {
  llvm::hash_code hash = hash_value(func.getFunctionType());
  func.getBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

struct OutlineComputeOpsPass
    : public mlir::zshard::impl::OutlineComputeOpsBase<OutlineComputeOpsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions;
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        functions.push_back(func);
    // Outlined functions by the hash of their body.
    DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> byHash;
    for (func::FuncOp func : functions) {
      unsigned numOutlined = 0;
      for (Block &block : func.getBody()) {
        SmallVector<Operation *> ops;
        for (Operation &op : block)
          if (isa<linalg::LinalgOp>(op) && op.getNumResults() == 0)
            ops.push_back(&op);
        for (Operation *op : ops)
          outline(op, func, numOutlined, symbols, byHash);
      }
    }
    llvm::SmallPtrSet<Operation *, 32> outlined;
    for (auto &entry : byHash)
      for (func::FuncOp callee : entry.second)
        outlined.insert(callee);
    markPrivateBuffers(module, outlined);
  }

  /// Marks `llvm.noalias` the memref arguments of the outlined functions
  /// that are, at every call, an allocation of the step (or a view of one)
  /// that no other argument of the call views, the others being
  /// allocations or arguments of the step too: no other pointer the
  /// function sees reaches that memory, so LLVM may keep loads of the other
  /// buffers out of loops that store to it and vectorise without checking
  /// for overlaps. A step argument is never marked (the runtime passes one
  /// buffer for an argument and its in-place out-parameter).
  void markPrivateBuffers(ModuleOp module,
                          const llvm::SmallPtrSetImpl<Operation *> &outlined) {
    llvm::MapVector<func::FuncOp, SmallVector<bool>> isPrivate;
    module.walk([&](func::CallOp call) {
      auto callee = dyn_cast_or_null<func::FuncOp>(
          SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr()));
      if (!callee || !outlined.contains(callee))
        return;
      auto [entry, inserted] = isPrivate.try_emplace(
          callee, SmallVector<bool>(call.getNumOperands(), true));
      SmallVector<Value> roots = llvm::map_to_vector(
          call.getOperands(), [](Value v) { return zshard::getViewRoot(v); });
      // Where every buffer of the call comes from: an allocation or an
      // argument of the calling function. A buffer of unknown origin (a
      // runtime call's result) might be any of them.
      auto allocated = [](Value root) {
        return isa<MemRefType>(root.getType()) &&
               root.getDefiningOp<memref::AllocOp>();
      };
      bool knownOrigins = llvm::all_of(roots, [&](Value root) {
        if (!isa<MemRefType>(root.getType()) || allocated(root))
          return true;
        auto arg = dyn_cast<BlockArgument>(root);
        return arg && arg.getOwner()->isEntryBlock() &&
               isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
      });
      for (auto [i, root] : llvm::enumerate(roots))
        if (!knownOrigins || !allocated(root) || llvm::count(roots, root) > 1)
          entry->second[i] = false;
    });
    for (auto &[callee, flags] : isPrivate)
      for (auto [i, flag] : llvm::enumerate(flags))
        if (flag)
          callee.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                            UnitAttr::get(module.getContext()));
  }

  /// Replaces `op` by a call of a function computing it, reusing an
  /// identical function outlined before.
  void
  outline(Operation *op, func::FuncOp parent, unsigned &numOutlined,
          SymbolTable &symbols,
          DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> &byHash) {
    OutlinedSlice slice;
    if (failed(collectSlice(op, slice))) {
      ++numKept;
      return;
    }
    MLIRContext *context = op->getContext();
    SmallVector<Type> types = llvm::map_to_vector(
        slice.arguments, [](Value value) { return value.getType(); });
    OpBuilder builder(context);
    builder.setInsertionPoint(parent);
    FunctionType type = FunctionType::get(context, types, {});
    auto callee = func::FuncOp::create(builder, op->getLoc(), "", type);
    callee.setPrivate();
    // Kept apart by LLVM's inliner too, or the step would be one function
    // again.
    callee->setAttr("no_inline", UnitAttr::get(context));
    Block *entry = callee.addEntryBlock();
    IRMapping mapping;
    mapping.map(slice.arguments, entry->getArguments());
    builder.setInsertionPointToStart(entry);
    for (Operation *def : slice.cloned)
      builder.clone(*def, mapping);
    Operation *body = builder.clone(*op, mapping);
    // Phases and module paths told the passes before this one which block
    // the op belongs to; the code is the same for every block.
    body->setDiscardableAttrs(DictionaryAttr::get(context));
    func::ReturnOp::create(builder, op->getLoc());

    llvm::hash_code hash = hashBody(callee);
    SmallVector<func::FuncOp, 1> &candidates = byHash[hash];
    func::FuncOp target;
    for (func::FuncOp candidate : candidates)
      if (candidate.getFunctionType() == type &&
          OperationEquivalence::isRegionEquivalentTo(
              &candidate.getBody(), &callee.getBody(),
              OperationEquivalence::IgnoreLocations)) {
        target = candidate;
        break;
      }
    if (target) {
      callee.erase();
      ++numShared;
    } else {
      callee.setSymName(
          (parent.getSymName() + ".compute." + Twine(numOutlined++)).str());
      symbols.insert(callee);
      candidates.push_back(callee);
      target = callee;
      ++numFunctions;
    }
    builder.setInsertionPoint(op);
    auto call =
        func::CallOp::create(builder, op->getLoc(), target, slice.arguments);
    // The phase stays with the call, where profiles and reports find it.
    if (Attribute phase = op->getAttr(zshard::contract::kPhase))
      call->setAttr(zshard::contract::kPhase, phase);
    op->erase();
    // Views only the op used go with it (constants are left to the
    // canonicalizer).
    for (Operation *def : llvm::reverse(slice.cloned))
      if (!isa<arith::ConstantOp>(def) && def->use_empty())
        def->erase();
  }
};

} // namespace
