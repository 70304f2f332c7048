//===- MemoryPlan.cpp - static per-rank memory of a compiled step ---------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/MemoryPlan.h"
#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Support/TypeBytes.h"
#include "zshard/Support/ViewRoot.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::zshard;

// The dialect's categories are the runtime's, value for value.
static_assert(int(MemCategory::Parameters) == ZSHARD_RT_MEM_PARAMETERS);
static_assert(int(MemCategory::Gradients) == ZSHARD_RT_MEM_GRADIENTS);
static_assert(int(MemCategory::OptimizerState) ==
              ZSHARD_RT_MEM_OPTIMIZER_STATE);
static_assert(int(MemCategory::Activations) == ZSHARD_RT_MEM_ACTIVATIONS);
static_assert(int(MemCategory::Communication) == ZSHARD_RT_MEM_COMMUNICATION);
static_assert(int(MemCategory::Other) == ZSHARD_RT_MEM_OTHER);
static_assert(int(MemCategory::HostOffload) == ZSHARD_RT_MEM_HOST_OFFLOAD);
static_assert(int(MemCategory::Buffers) == ZSHARD_RT_MEM_BUFFERS);
static_assert(int(getMaxEnumValForMemCategory()) + 1 ==
              ZSHARD_RT_MEM_NUM_CATEGORIES);

namespace {

/// Bounds of an index computation, by interval arithmetic over the arith
/// ops that compute offsets and lengths of shards; unknown leaves (the
/// rank's grid coordinate, a runtime call) are unbounded.
struct Interval {
  std::optional<int64_t> lo, hi;
};

std::optional<int64_t> add(std::optional<int64_t> a, std::optional<int64_t> b) {
  int64_t r;
  if (!a || !b || __builtin_add_overflow(*a, *b, &r))
    return std::nullopt;
  return r;
}

std::optional<int64_t> negate(std::optional<int64_t> a) {
  if (!a || *a == std::numeric_limits<int64_t>::min())
    return std::nullopt;
  return -*a;
}

Interval bounds(Value value, unsigned depth = 0) {
  if (depth > 64)
    return {};
  Operation *def = value.getDefiningOp();
  if (!def)
    return {};
  if (auto c = dyn_cast<arith::ConstantIndexOp>(def))
    return {c.value(), c.value()};
  if (auto c = dyn_cast<arith::ConstantIntOp>(def))
    return {c.value(), c.value()};
  auto operands = [&](unsigned i) { return bounds(def->getOperand(i), depth + 1); };
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return operands(0);
  if (isa<arith::AddIOp>(def)) {
    Interval a = operands(0), b = operands(1);
    return {add(a.lo, b.lo), add(a.hi, b.hi)};
  }
  if (isa<arith::SubIOp>(def)) {
    Interval a = operands(0), b = operands(1);
    return {add(a.lo, negate(b.hi)), add(a.hi, negate(b.lo))};
  }
  if (isa<arith::MinSIOp>(def)) {
    Interval a = operands(0), b = operands(1);
    auto lower = a.lo && b.lo ? std::optional(std::min(*a.lo, *b.lo))
                              : std::nullopt;
    auto upper = !a.hi ? b.hi : !b.hi ? a.hi : std::optional(std::min(*a.hi, *b.hi));
    return {lower, upper};
  }
  if (isa<arith::MaxSIOp>(def)) {
    Interval a = operands(0), b = operands(1);
    auto lower = !a.lo ? b.lo : !b.lo ? a.lo : std::optional(std::max(*a.lo, *b.lo));
    auto upper = a.hi && b.hi ? std::optional(std::max(*a.hi, *b.hi))
                              : std::nullopt;
    return {lower, upper};
  }
  return {};
}

} // namespace

void MemoryPlan::charge(Operation *at, int category, int64_t bytes) {
  live[category] += bytes;
  peaks[category] = std::max(peaks[category], live[category] + held[category]);
  int64_t total = 0;
  for (int c = 0; c < kNumMemCategories; ++c)
    if (isDeviceCategory(c))
      total += live[c] + held[c];
  if (total > peakTotal) {
    peakTotal = total;
    peakOp = at;
    for (int c = 0; c < kNumMemCategories; ++c)
      liveAtPeak[c] = live[c] + held[c];
  }
}

void MemoryPlan::addHeld(MemCategory category, int64_t bytes) {
  held[int(category)] += bytes;
  peaks[int(category)] += bytes;
  bool device = isDeviceCategory(int(category));
  for (Point &point : timeline) {
    point.live[int(category)] += bytes;
    point.total += device ? bytes : 0;
  }
  peakTotal += device ? bytes : 0;
  liveAtPeak[int(category)] += bytes;
}

LogicalResult MemoryPlan::run() {
  live = MemBytes{};
  peaks = held;
  liveAtPeak = held;
  peakTotal = 0;
  for (int c = 0; c < kNumMemCategories; ++c)
    if (isDeviceCategory(c))
      peakTotal += held[c];
  peakOp = nullptr;
  timeline.clear();

  int current = int(MemCategory::Activations);
  llvm::DenseMap<Value, std::pair<int, int64_t>> allocations;
  std::function<LogicalResult(Block &, bool)> visit =
      [&](Block &block, bool topLevel) -> LogicalResult {
    for (Operation &op : block) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        if (call.getCallee() == kSetAllocCategoryFn && call.getNumOperands()) {
          Interval code = bounds(call.getOperand(0));
          if (!code.lo || code.lo != code.hi || *code.lo < 0 ||
              *code.lo >= kNumMemCategories)
            return emitError(getReportLoc(call),
                             "memory plan: the allocation category is "
                             "not a constant category");
          current = int(*code.lo);
        }
      } else if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        MemRefType type = alloc.getType();
        int64_t bytes = getElementBytes(type.getElementType());
        unsigned dynamic = 0;
        for (int64_t dim : type.getShape()) {
          int64_t size = dim;
          if (ShapedType::isDynamic(dim)) {
            Interval b = bounds(alloc.getDynamicSizes()[dynamic++]);
            if (!b.hi)
              return emitError(getReportLoc(alloc),
                               "memory plan: cannot bound the size of "
                               "this allocation");
            size = std::max<int64_t>(*b.hi, 0);
          }
          if (__builtin_mul_overflow(bytes, size, &bytes))
            return emitError(getReportLoc(alloc),
                             "memory plan: allocation size overflows");
        }
        allocations[alloc.getResult()] = {current, bytes};
        charge(&op, current, bytes);
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        auto it = allocations.find(getViewRoot(dealloc.getMemref()));
        if (it == allocations.end())
          return emitError(getReportLoc(dealloc),
                           "memory plan: deallocates a buffer that "
                           "is not an allocation of the step");
        live[it->second.first] -= it->second.second;
        allocations.erase(it);
      }
      for (Region &region : op.getRegions())
        for (Block &nested : region)
          if (failed(visit(nested, false)))
            return failure();
      if (topLevel) {
        Point point{&op, live, 0};
        for (int c = 0; c < kNumMemCategories; ++c) {
          point.live[c] += held[c];
          if (isDeviceCategory(c))
            point.total += point.live[c];
        }
        timeline.push_back(point);
      }
    }
    return success();
  };
  if (step.isExternal())
    return emitError(getReportLoc(step), "memory plan: the step has no body");
  return visit(step.front(), true);
}

std::string MemoryPlan::toJSON() const {
  auto byCategory = [](const MemBytes &bytes) {
    llvm::json::Object object;
    for (int c = 0; c < kNumMemCategories; ++c)
      object[stringifyMemCategory(MemCategory(c))] = bytes[c];
    return object;
  };
  llvm::json::Array points;
  size_t n = timeline.size();
  for (size_t i = 0; i < n; ++i) {
    llvm::json::Object point;
    point["pos"] = n > 1 ? double(i) / double(n - 1) : 0.0;
    point["live"] = byCategory(timeline[i].live);
    point["total"] = timeline[i].total;
    points.push_back(std::move(point));
  }
  llvm::json::Object root;
  root["peak"] = byCategory(peaks);
  root["peak_total"] = peakTotal;
  root["live_at_peak"] = byCategory(liveAtPeak);
  root["held"] = byCategory(held);
  root["events"] = std::move(points);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(root));
  return text;
}

static int64_t tensorBytes(RankedTensorType type) {
  return type.getNumElements() * getElementBytes(type.getElementType());
}

static MemCategory heldCategory(const StepArgument &arg) {
  switch (arg.role) {
  case ArgRole::Param:
  case ArgRole::ParamShard:
    return MemCategory::Parameters;
  case ArgRole::OptState:
  case ArgRole::OptStateShard:
    return arg.placement == Placement::Host ? MemCategory::HostOffload
                                            : MemCategory::OptimizerState;
  case ArgRole::Batch:
    return MemCategory::Activations;
  case ArgRole::Buffer:
    return MemCategory::Buffers;
  case ArgRole::Hyper:
    break;
  }
  return MemCategory::Other;
}

void mlir::zshard::addRuntimeHeldBuffers(MemoryPlan &plan,
                                         const StepContract &contract,
                                         func::FuncOp lowered) {
  ArrayRef<StepArgument> arguments = contract.getArguments();
  for (const StepArgument &arg : arguments)
    plan.addHeld(heldCategory(arg), tensorBytes(arg.type));
  for (const StepResult &result : contract.getResults()) {
    unsigned outParam = arguments.size() + result.index;
    if (lowered && outParam < lowered.getNumArguments() &&
        lowered.getArgAttr(outParam, contract::kInPlace))
      continue;
    MemCategory category = MemCategory::Other;
    if (result.role != ResultRole::Loss)
      for (const StepArgument &arg : arguments)
        if (arg.name == result.name && arg.role != ArgRole::Batch &&
            arg.role != ArgRole::Hyper)
          category = heldCategory(arg);
    plan.addHeld(category, tensorBytes(result.type));
  }
}

std::string mlir::zshard::formatBytes(int64_t bytes) {
  static constexpr StringLiteral units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = double(bytes);
  unsigned unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  return llvm::formatv("{0:f2} {1}", value, units[unit]).str();
}

std::string mlir::zshard::formatMemoryTable(const MemoryPlan &plan) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0,-16} {1,16} {2,16} {3,16}\n", "category (bytes)",
                      "held by runtime", "peak", "at total peak");
  for (int c = 0; c < kNumMemCategories; ++c)
    os << llvm::formatv("{0,-16} {1,16} {2,16} {3,16}\n",
                        stringifyMemCategory(MemCategory(c)), plan.getHeld()[c],
                        plan.getPeaks()[c], plan.getLiveAtPeak()[c]);
  os << llvm::formatv("{0,-16} {1,16} {2,16} {3,16}\n", "total", "", "",
                      plan.getPeakTotal());
  os << "peak per rank: " << formatBytes(plan.getPeakTotal()) << "\n";
  if (int64_t host = plan.getPeaks()[int(MemCategory::HostOffload)])
    os << "host pool per rank (offloaded, not in the peak): "
       << formatBytes(host) << "\n";
  return text;
}
