//===- UpdateInPlace.cpp - --zshard-update-in-place -----------------------===//
//
// Part of the zshard project.
//
// After bufferization with out-parameters, every updated parameter and
// optimizer-state tensor is computed into a temporary buffer that the end of
// the step copies into its out-parameter; the runtime then holds the state
// twice (argument and out-parameter) and, at the end of the step, a third
// time in the temporaries. This pass writes the update into the argument's
// own buffer wherever nothing reads the argument afterwards, and marks the
// out-parameter `zshard.in_place`: the runtime passes the argument's buffer
// for it and keeps no second copy.
//
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "Bufferized/BufferUses.h"
#include "ZShardToRuntime/RankIndexEval.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"
#include "zshard/Support/ViewRoot.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_UPDATEINPLACE
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;
using namespace mlir::zshard;

namespace {

StringRef nameOf(func::FuncOp func, unsigned index) {
  auto name = func.getArgAttrOfType<StringAttr>(index, contract::kName);
  return name ? name.getValue() : StringRef();
}

/// The key of state argument `name` of role `role` in `stateArgs`.
std::string stateKey(ArgRole role, StringRef name) {
  return (stringifyArgRole(role) + ":" + name).str();
}

/// Whether `op` may read `state` and write `update` at once: an
/// elementwise linalg op (all loops parallel) that reads `state` once, as an
/// input, through the same permutation map it writes `update` with, so
/// every element is read and then written by one iteration only.
bool readsAndWritesElementwise(Operation *op, Value state, Value update) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return false;
  OpOperand *read = nullptr, *write = nullptr;
  for (OpOperand &operand : op->getOpOperands()) {
    if (operand.get() == state) {
      if (read || linalgOp.isDpsInit(&operand))
        return false;
      read = &operand;
    } else if (operand.get() == update) {
      if (write || !linalgOp.isDpsInit(&operand) ||
          linalgOp.payloadUsesValueFromOperand(&operand))
        return false;
      write = &operand;
    }
  }
  if (!read || !write)
    return false;
  AffineMap readMap = linalgOp.getMatchingIndexingMap(read);
  return readMap == linalgOp.getMatchingIndexingMap(write) &&
         readMap.isPermutation();
}

/// A 1-D, unit-stride slice of a buffer: its subview op and the top-level
/// ops that touch it.
struct Slice {
  OpFoldResult offset, size;
  SmallVector<Operation *> touching;
};

/// The slice `user` takes of its source, if it is a 1-D unit-stride subview.
std::optional<Slice> asSlice(Operation *user, Block &block) {
  auto view = dyn_cast<memref::SubViewOp>(user);
  if (!view || view->getBlock() != &block ||
      view.getSourceType().getRank() != 1 || !view.hasUnitStride())
    return std::nullopt;
  SmallVector<Operation *> touching = touchingOps(view.getResult(), block);
  touching.push_back(view);
  return Slice{view.getMixedOffsets()[0], view.getMixedSizes()[0],
               std::move(touching)};
}

/// Whether the update, a copy of the state (`init`) whose slices are then
/// overwritten, can be the state itself: every read of the state after
/// `init` is of a slice that no earlier write of the update overlaps, on
/// any rank. This is the shape of an optimizer on flat shards: each member
/// reads its slice of the shard and writes its new values to the same,
/// disjoint slice of the new shard.
bool slicesDisjoint(Block &block, const BlockPositions &position, Value state,
                    Value update, memref::CopyOp init,
                    ArrayRef<Operation *> ignore) {
  if (init.getSource() != state || init.getTarget() != update)
    return false;
  unsigned initAt = position.lookup(init);
  SmallVector<Slice> reads, writes;
  for (Operation *user : state.getUsers()) {
    if (user == init)
      continue;
    if (std::optional<Slice> slice = asSlice(user, block)) {
      reads.push_back(std::move(*slice));
      continue;
    }
    // Any other read (with whatever it derives from the state: pointers,
    // the handles of asynchronous collectives) must be over before the
    // update is first written.
    SmallVector<Operation *> touching = {block.findAncestorOpInBlock(*user)};
    for (Value result : user->getResults())
      llvm::append_range(touching, touchingOps(result, block));
    for (Operation *op : touching)
      if (!op || position.lookup(op) >= initAt)
        return false;
  }
  for (Operation *user : update.getUsers()) {
    if (user == init || llvm::is_contained(ignore, user))
      continue;
    std::optional<Slice> slice = asSlice(user, block);
    if (!slice)
      return false;
    writes.push_back(std::move(*slice));
  }
  // The slices' offsets and sizes on every rank.
  SmallVector<Value> dynamic;
  auto collect = [&](const Slice &slice) {
    for (OpFoldResult v : {slice.offset, slice.size})
      if (auto value = dyn_cast<Value>(v))
        dynamic.push_back(value);
  };
  llvm::for_each(reads, collect);
  llvm::for_each(writes, collect);
  std::optional<SmallVector<SmallVector<int64_t>>> ranks =
      evaluateOnEveryRank(dynamic);
  if (!ranks)
    return false;
  for (const SmallVector<int64_t> &values : *ranks) {
    llvm::DenseMap<Value, int64_t> known;
    for (auto [value, v] : llvm::zip(dynamic, values))
      known[value] = v;
    auto range = [&](const Slice &slice) {
      auto get = [&](OpFoldResult v) {
        if (auto value = dyn_cast<Value>(v))
          return known.lookup(value);
        return cast<IntegerAttr>(cast<Attribute>(v)).getInt();
      };
      int64_t offset = get(slice.offset);
      return std::make_pair(offset, offset + get(slice.size));
    };
    for (const Slice &write : writes) {
      unsigned firstWrite = UINT_MAX;
      for (Operation *op : write.touching)
        firstWrite = std::min(firstWrite, position.lookup(op));
      auto [wBegin, wEnd] = range(write);
      for (const Slice &read : reads) {
        unsigned lastRead = 0;
        for (Operation *op : read.touching)
          lastRead = std::max(lastRead, position.lookup(op));
        if (lastRead < firstWrite || lastRead < initAt)
          continue;
        auto [rBegin, rEnd] = range(read);
        if (wBegin < rEnd && rBegin < wEnd && wBegin < wEnd && rBegin < rEnd)
          return false;
      }
    }
  }
  return true;
}

/// The one copy that fills the out-parameter `out`, at the top level of
/// `block`, or null when `out` is filled otherwise.
memref::CopyOp finalCopy(Value out, Block &block) {
  if (!out.hasOneUse())
    return {};
  auto copy = dyn_cast<memref::CopyOp>(*out.getUsers().begin());
  if (!copy || copy.getTarget() != out || copy->getBlock() != &block)
    return {};
  return copy;
}

struct UpdateInPlacePass
    : public mlir::zshard::impl::UpdateInPlaceBase<UpdateInPlacePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func->hasAttr(contract::kStep) && !func.isExternal() &&
          llvm::hasSingleElement(func.getBody())) {
        process(func);
        recordInPlace(func);
      }
  }

  /// Keeps the module's ABI record (zshard-record-abi) current: a result
  /// whose out-parameter is now `zshard.in_place` is recorded in place.
  void recordInPlace(func::FuncOp func) {
    auto abi = getOperation()->getAttrOfType<StepABIAttr>(contract::kABI);
    if (!abi || abi.getStep() != func.getSymName())
      return;
    unsigned numArguments = abi.getArguments().size();
    SmallVector<Attribute> results;
    bool changed = false;
    unsigned outIndex = numArguments;
    for (ABIResultAttr result : abi.getResultRecords()) {
      if (!result.isInPlace() && outIndex < func.getNumArguments() &&
          func.getArgAttr(outIndex, contract::kInPlace)) {
        result = ABIResultAttr::get(&getContext(), result.getRole(),
                                    result.getName(), result.getType(),
                                    result.getUnit(), result.getSlot(),
                                    BoolAttr::get(&getContext(), true));
        changed = true;
      }
      results.push_back(result);
      ++outIndex;
    }
    if (changed)
      getOperation()->setAttr(contract::kABI, abi.withResults(results));
  }

  void process(func::FuncOp func) {
    Block &block = func.front();
    // Rewrites erase ops and change operands but move none, so the order
    // numbered once stays right for the ops that remain.
    BlockPositions position = numberOps(block);
    llvm::StringMap<unsigned> stateArgs;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      std::optional<ArgRole> role = readArgRole(func, i);
      if (role && ::zshard_abi::updateRole(*role))
        stateArgs[stateKey(*role, nameOf(func, i))] = i;
    }
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      std::optional<ResultRole> outRole = readOutParamRole(func, i);
      std::optional<ArgRole> argRole =
          outRole ? ::zshard_abi::updatedRole(*outRole) : std::nullopt;
      if (!argRole)
        continue;
      auto it = stateArgs.find(stateKey(*argRole, nameOf(func, i)));
      if (it == stateArgs.end())
        continue;
      if (succeeded(rewrite(func, block, position, it->second, i)) ||
          succeeded(copyIntoState(func, block, position, it->second, i)))
        ++numInPlace;
      else if (readPlacement(func, it->second) == Placement::Host)
        func.emitWarning() << "offloaded '" << nameOf(func, i)
                           << "' is updated through a temporary in device "
                              "memory: the step reads it after its update";
    }
  }

  /// The fallback when the update cannot be computed in the argument's
  /// buffer: the final copy into the out-parameter `outIndex` goes into
  /// argument `stateIndex` instead, which nothing touches after it. The
  /// update's own buffer stays a temporary; no second state buffer is held.
  LogicalResult copyIntoState(func::FuncOp func, Block &block,
                              const BlockPositions &position,
                              unsigned stateIndex, unsigned outIndex) {
    Value state = func.getArgument(stateIndex);
    memref::CopyOp copy = finalCopy(func.getArgument(outIndex), block);
    if (!copy || copy.getSource().getType() != state.getType())
      return failure();
    Value root = getViewRoot(copy.getSource());
    Operation *lastRead = lastTouch(state, block, position);
    if (root == state ||
        (lastRead && position.lookup(lastRead) > position.lookup(copy)))
      return failure();
    copy.getTargetMutable().assign(state);
    func.setArgAttr(outIndex, contract::kInPlace, UnitAttr::get(&getContext()));
    return success();
  }

  /// Writes the update of argument `stateIndex` into the argument itself
  /// when the out-parameter `outIndex` is filled by one copy from a
  /// temporary that is first written after the argument's last read.
  LogicalResult rewrite(func::FuncOp func, Block &block,
                        const BlockPositions &position, unsigned stateIndex,
                        unsigned outIndex) {
    Value state = func.getArgument(stateIndex);
    memref::CopyOp copy = finalCopy(func.getArgument(outIndex), block);
    if (!copy)
      return failure();
    // Bufferization already wrote the update into the argument (function
    // arguments are writable): only the copy out is left to drop.
    if (copy.getSource() == state) {
      if (lastTouch(state, block, position) != copy)
        return failure();
      copy->erase();
      func.setArgAttr(outIndex, contract::kInPlace,
                      UnitAttr::get(&getContext()));
      return success();
    }
    auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != &block ||
        alloc.getType() != state.getType())
      return failure();
    Value update = alloc.getResult();

    SmallVector<Operation *> deallocs;
    for (Operation *user : update.getUsers())
      if (isa<memref::DeallocOp>(user))
        deallocs.push_back(user);
    SmallVector<Operation *> ignore(deallocs);
    ignore.push_back(copy);
    SmallVector<Operation *> writers = touchingOps(update, block, ignore);
    if (writers.empty())
      return failure();
    Operation *firstWrite =
        *llvm::min_element(writers, [&](Operation *a, Operation *b) {
          return position.lookup(a) < position.lookup(b);
        });
    Operation *lastRead = lastTouch(state, block, position);
    auto init = dyn_cast<memref::CopyOp>(firstWrite);
    bool readsFirst = true;
    if (lastRead) {
      unsigned readAt = position.lookup(lastRead);
      unsigned writeAt = position.lookup(firstWrite);
      readsFirst = readAt < writeAt ||
                   (readAt == writeAt &&
                    readsAndWritesElementwise(firstWrite, state, update));
    }
    if (!readsFirst &&
        !(init && slicesDisjoint(block, position, state, update, init, ignore)))
      return failure();
    // A copy of the state into the update would copy it onto itself.
    if (init && init.getSource() == state && init.getTarget() == update)
      init->erase();
    for (Operation *dealloc : deallocs)
      dealloc->erase();
    copy->erase();
    update.replaceAllUsesWith(state);
    alloc->erase();
    func.setArgAttr(outIndex, contract::kInPlace, UnitAttr::get(&getContext()));
    return success();
  }
};

} // namespace
