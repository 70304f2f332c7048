//===- RankIndexEval.cpp - index arithmetic for every rank ----------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "ZShardToRuntime/RankIndexEval.h"

#include "ZShardToRuntime/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::zshard;

namespace {

/// A coordinate call's axis and size, when it has both.
std::optional<std::pair<int64_t, int64_t>> coordinateAxis(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call || call.getCallee() != kGridCoordFn || call.getNumOperands() != 1)
    return std::nullopt;
  auto size = call->getAttrOfType<IntegerAttr>(kAxisSizeAttr);
  auto axis = call.getOperand(0).getDefiningOp<arith::ConstantIntOp>();
  if (!size || !axis || size.getInt() < 1)
    return std::nullopt;
  return std::make_pair(axis.value(), size.getInt());
}

class Evaluator {
public:
  explicit Evaluator(const llvm::DenseMap<int64_t, int64_t> &coords)
      : coords(coords) {}

  std::optional<int64_t> eval(Value value, unsigned depth = 0) {
    if (auto it = memo.find(value); it != memo.end())
      return it->second;
    std::optional<int64_t> result = compute(value, depth);
    if (result)
      memo[value] = *result;
    return result;
  }

private:
  std::optional<int64_t> compute(Value value, unsigned depth) {
    Operation *def = value.getDefiningOp();
    if (!def || depth > 256)
      return std::nullopt;
    if (auto c = dyn_cast<arith::ConstantIndexOp>(def))
      return c.value();
    if (auto c = dyn_cast<arith::ConstantIntOp>(def))
      return c.value();
    if (auto axis = coordinateAxis(def))
      return coords.lookup(axis->first);
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp>(def))
      return eval(def->getOperand(0), depth + 1);
    if (auto select = dyn_cast<arith::SelectOp>(def)) {
      std::optional<int64_t> cond = eval(select.getCondition(), depth + 1);
      if (!cond)
        return std::nullopt;
      return eval(*cond ? select.getTrueValue() : select.getFalseValue(),
                  depth + 1);
    }
    if (def->getNumOperands() != 2)
      return std::nullopt;
    std::optional<int64_t> a = eval(def->getOperand(0), depth + 1);
    std::optional<int64_t> b = eval(def->getOperand(1), depth + 1);
    if (!a || !b)
      return std::nullopt;
    if (isa<arith::AddIOp>(def))
      return *a + *b;
    if (isa<arith::SubIOp>(def))
      return *a - *b;
    if (isa<arith::MulIOp>(def))
      return *a * *b;
    if (isa<arith::MinSIOp>(def))
      return std::min(*a, *b);
    if (isa<arith::MaxSIOp>(def))
      return std::max(*a, *b);
    if (*b != 0 && isa<arith::DivSIOp>(def))
      return *a / *b;
    if (*b != 0 && isa<arith::RemSIOp>(def))
      return *a % *b;
    if (*b > 0 && isa<arith::FloorDivSIOp>(def))
      return *a >= 0 ? *a / *b : -((-*a + *b - 1) / *b);
    if (*b > 0 && isa<arith::CeilDivSIOp>(def))
      return *a >= 0 ? (*a + *b - 1) / *b : -((-*a) / *b);
    if (auto cmp = dyn_cast<arith::CmpIOp>(def)) {
      switch (cmp.getPredicate()) {
      case arith::CmpIPredicate::eq:
        return *a == *b;
      case arith::CmpIPredicate::ne:
        return *a != *b;
      case arith::CmpIPredicate::slt:
        return *a < *b;
      case arith::CmpIPredicate::sle:
        return *a <= *b;
      case arith::CmpIPredicate::sgt:
        return *a > *b;
      case arith::CmpIPredicate::sge:
        return *a >= *b;
      default:
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  const llvm::DenseMap<int64_t, int64_t> &coords;
  llvm::DenseMap<Value, int64_t> memo;
};

/// The coordinate calls `values` depend on: axis -> size.
std::optional<llvm::DenseMap<int64_t, int64_t>>
findAxes(ArrayRef<Value> values) {
  llvm::DenseMap<int64_t, int64_t> axes;
  llvm::SetVector<Value> worklist(values.begin(), values.end());
  for (size_t i = 0; i < worklist.size(); ++i) {
    Operation *def = worklist[i].getDefiningOp();
    if (!def)
      return std::nullopt;
    if (auto axis = coordinateAxis(def)) {
      axes[axis->first] = axis->second;
      continue;
    }
    if (isa<func::CallOp>(def))
      return std::nullopt;
    for (Value operand : def->getOperands())
      worklist.insert(operand);
  }
  return axes;
}

} // namespace

std::optional<SmallVector<SmallVector<int64_t>>>
mlir::zshard::evaluateOnEveryRank(ArrayRef<Value> values, int64_t maxRanks) {
  std::optional<llvm::DenseMap<int64_t, int64_t>> axes = findAxes(values);
  if (!axes)
    return std::nullopt;
  SmallVector<std::pair<int64_t, int64_t>> sizes(axes->begin(), axes->end());
  int64_t assignments = 1;
  for (auto [axis, size] : sizes)
    if ((assignments *= size) > maxRanks)
      return std::nullopt;
  SmallVector<SmallVector<int64_t>> rows;
  for (int64_t index = 0; index < assignments; ++index) {
    llvm::DenseMap<int64_t, int64_t> coords;
    int64_t rest = index;
    for (auto [axis, size] : sizes) {
      coords[axis] = rest % size;
      rest /= size;
    }
    Evaluator evaluator(coords);
    SmallVector<int64_t> row;
    for (Value value : values) {
      std::optional<int64_t> result = evaluator.eval(value);
      if (!result)
        return std::nullopt;
      row.push_back(*result);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}
