//===- MemoryPlan.h - static per-rank memory of a compiled step -*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Liveness over a bufferized step with its deallocations placed (after the
/// buffer-deallocation pipeline and zshard-tag-allocations): walks the step
/// in program order exactly as the runtime will execute it, charging every
/// memref.alloc to the category the last zshard_rt_step_set_alloc_category
/// call selected and releasing it at its memref.dealloc. The result is the
/// live bytes per category after every top-level op (the timeline) and the
/// peak, per category and of the total. Dynamic sizes are bounded from
/// above by interval arithmetic over index computations, so the plan is an
/// upper bound for every rank.
///
/// The buffers the runtime holds around the step (arguments and results,
/// by role) are not allocations of the step; `addHeld` adds them.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_MEMORYPLAN_H
#define ZSHARD_ANALYSIS_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"
#include "zshard/abi/MemoryCategory.h"

#include <array>
#include <cstdint>
#include <string>

namespace mlir {
namespace zshard {

// MemCategory, the runtime's memory categories, and its attribute
// #zshard.category are the dialect's (ZShardAttrs.td), with the values and
// names of zshard_rt_mem_category (checked in MemoryPlan.cpp). HostOffload
// (the runtime's host pool) is not device memory, so not part of the total;
// Buffers are buffer arguments (non-trained state, replicated on every
// rank).
constexpr int kNumMemCategories = ::zshard_abi::kNumMemCategories;
/// Whether a category is device memory, counted in the total.
constexpr bool isDeviceCategory(int category) {
  return ::zshard_abi::isDeviceMemCategory(category);
}
/// The runtime entry a compiled step selects the category of its next
/// allocations with (one i32 argument, a MemCategory).
constexpr StringLiteral kSetAllocCategoryFn =
    "zshard_rt_step_set_alloc_category";

using MemBytes = std::array<int64_t, kNumMemCategories>;

class MemoryPlan {
public:
  /// A point of the timeline: live bytes after a top-level op.
  struct Point {
    Operation *op;
    MemBytes live;
    int64_t total;
  };

  explicit MemoryPlan(func::FuncOp step) : step(step) {}

  /// Walks the step; fails with a diagnostic on an allocation whose size has
  /// no upper bound or a deallocation of an unknown buffer.
  LogicalResult run();

  /// Adds `bytes` held in `category` for the whole step (the runtime's
  /// argument and result buffers).
  void addHeld(MemCategory category, int64_t bytes);

  const SmallVector<Point> &getTimeline() const { return timeline; }
  /// Per-category peaks (each at its own moment) and the peak of the total.
  const MemBytes &getPeaks() const { return peaks; }
  int64_t getPeakTotal() const { return peakTotal; }
  /// Live bytes by category when the total peaked, and the op after which
  /// it did (null when the peak is before the first op).
  const MemBytes &getLiveAtPeak() const { return liveAtPeak; }
  Operation *getPeakOp() const { return peakOp; }
  const MemBytes &getHeld() const { return held; }

  /// The plan as JSON: peaks, live-at-peak, held bytes and the timeline
  /// (position 0..1 and live bytes per category).
  std::string toJSON() const;

private:
  void charge(Operation *at, int category, int64_t bytes);

  func::FuncOp step;
  MemBytes held{};
  MemBytes live{};
  MemBytes peaks{};
  MemBytes liveAtPeak{};
  int64_t peakTotal = 0;
  Operation *peakOp = nullptr;
  SmallVector<Point> timeline;
};

class StepContract;

/// Adds the buffers the runtime holds around `contract`'s step to `plan`,
/// charged by role as the runtime charges them: parameters (and their
/// shards) to parameters, optimizer state to optimizer_state (host_offload
/// when placed in host memory), batch inputs to activations,
/// hyper-parameters and the loss to other. A result is charged like the
/// argument it updates, and not at all when `lowered` (the bufferized step,
/// whose out-parameters follow the arguments) marks its out-parameter
/// zshard.in_place: the runtime then passes the argument's buffer.
void addRuntimeHeldBuffers(MemoryPlan &plan, const StepContract &contract,
                           func::FuncOp lowered = {});

/// `bytes` in the largest binary unit that keeps it at least 1 ("1.50 MiB").
std::string formatBytes(int64_t bytes);

/// The plan as a table: one row per category with the bytes held by the
/// runtime, the category's own peak, and its share of the total peak.
std::string formatMemoryTable(const MemoryPlan &plan);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_ANALYSIS_MEMORYPLAN_H
