//===- CostModel.cpp - roofline compute and alpha-beta links --------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Analysis/CostModel.h"
#include "zshard/Analysis/ModulePaths.h"

#include "zshard/Analysis/StepContract.h"

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Support/TypeBytes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::zshard;

// Dense peaks from the vendors' data sheets (SXM parts); f32 is plain FP32,
// not TF32. The cpu preset is this machine: one core's OpenBLAS sgemm rate
// and a stream-like bandwidth, as bench/step_time.py measures. The host link
// is PCIe 4.0 x16 (A100) or 5.0 x16 (H100, H200) at about 80% of its peak;
// the cpu's host pool is its own memory. In DevicePreset's order; constexpr,
// so that options constructed before main (zshard-compile's) see it filled.
static constexpr llvm::cl::OptionEnumValue kDeviceValues[] = {
    {"a100", int(DevicePreset::A100),
     "A100 SXM: 19.5 TFLOP/s f32, 312 bf16, 2.0 TB/s, host 25 GB/s"},
    {"h100", int(DevicePreset::H100),
     "H100 SXM: 67 TFLOP/s f32, 989 bf16, 3.35 TB/s, host 50 GB/s"},
    {"h200", int(DevicePreset::H200),
     "H200 SXM: 67 TFLOP/s f32, 989 bf16, 4.8 TB/s, host 50 GB/s"},
    {"cpu", int(DevicePreset::Cpu),
     "one core measured: 60 GFLOP/s f32, 5 bf16, 20 GB/s"},
};

DeviceModel mlir::zshard::getDeviceModel(DevicePreset preset) {
  std::string name = kDeviceValues[int(preset)].Name.str();
  switch (preset) {
  case DevicePreset::A100:
    return DeviceModel{name, 19.5e12, 312e12, 2.0e12, 25e9};
  case DevicePreset::H100:
    return DeviceModel{name, 67e12, 989e12, 3.35e12, 50e9};
  case DevicePreset::H200:
    return DeviceModel{name, 67e12, 989e12, 4.8e12, 50e9};
  case DevicePreset::Cpu:
    return DeviceModel{name, 60e9, 5e9, 20e9, 20e9};
  }
  llvm_unreachable("unknown device preset");
}

// Per-direction bandwidth per rank and a per-step latency. In LinkPreset's
// order.
static constexpr llvm::cl::OptionEnumValue kLinkValues[] = {
    {"nvlink", int(LinkPreset::NVLink), "NVLink: 450 GB/s per rank, 3 us"},
    {"ib", int(LinkPreset::IB), "InfiniBand NDR 400 Gbit/s: 50 GB/s, 5 us"},
    {"eth100", int(LinkPreset::Eth100), "100 Gbit Ethernet: 12.5 GB/s, 20 us"},
    {"eth10", int(LinkPreset::Eth10), "10 Gbit Ethernet: 1.25 GB/s, 50 us"},
};

LinkModel mlir::zshard::getLinkModel(LinkPreset preset) {
  std::string name = kLinkValues[int(preset)].Name.str();
  switch (preset) {
  case LinkPreset::NVLink:
    return LinkModel{name, 450e9, 3e-6};
  case LinkPreset::IB:
    return LinkModel{name, 50e9, 5e-6};
  case LinkPreset::Eth100:
    return LinkModel{name, 12.5e9, 20e-6};
  case LinkPreset::Eth10:
    return LinkModel{name, 1.25e9, 50e-6};
  }
  llvm_unreachable("unknown link preset");
}

EnumOptionValues mlir::zshard::getDevicePresetValues() {
  return {kDeviceValues};
}

EnumOptionValues mlir::zshard::getLinkPresetValues() { return {kLinkValues}; }

static int64_t bytesOf(Type type) {
  if (!isa<RankedTensorType>(type))
    return 0;
  return getStaticBytes(type).value_or(0);
}

/// The iterations of `op`'s loop nest (dynamic extents count 1) and whether
/// it reduces: a linalg op's, a zshard.adamw's, elementwise over its
/// parameter as it lowers, or an attention op's products. std::nullopt for
/// other ops.
static std::optional<std::pair<double, bool>> loopNest(Operation *op) {
  if (auto adamw = dyn_cast<AdamWOp>(op)) {
    double iterations = 1;
    for (int64_t size : adamw.getParam().getType().getShape())
      iterations *= ShapedType::isDynamic(size) ? 1 : double(size);
    return std::make_pair(iterations, false);
  }
  // Causal attention: the products of the tiles at or below the diagonal,
  // about half of the dense ones (forward QK^T and PV: 2 B H T^2 D flops;
  // backward recomputes QK^T and adds four: 5 B H T^2 D), as a reducing nest.
  if (isa<CausalAttentionOp, CausalAttentionGradOp>(op)) {
    ArrayRef<int64_t> q =
        cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
    double dense = double(q[0]) * double(q[1]) * double(q[2]) * double(q[2]) *
                   double(q[3]);
    return std::make_pair(isa<CausalAttentionOp>(op) ? dense : 2.5 * dense,
                          true);
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return std::nullopt;
  double iterations = 1;
  for (int64_t range : linalgOp.getStaticLoopRanges())
    iterations *= ShapedType::isDynamic(range) ? 1 : double(range);
  return std::make_pair(iterations, linalgOp.getNumReductionLoops() != 0);
}

/// FLOPs of a loop nest: one per iteration, two when it reduces.
static double flopsOf(std::pair<double, bool> nest) {
  return nest.second ? 2 * nest.first : nest.first;
}

double CostModel::opSeconds(Operation *op) const {
  std::optional<std::pair<double, bool>> nest = loopNest(op);
  if (!nest) {
    // Copies into or out of slices move their bytes; views move none.
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
      return 2.0 * double(bytesOf(insert.getSourceType())) /
             device.memoryBandwidth;
    return 0;
  }
  double flops = flopsOf(*nest);
  double bytes = 0;
  for (Value operand : op->getOperands())
    bytes += double(bytesOf(operand.getType()));
  for (Value result : op->getResults())
    bytes += double(bytesOf(result.getType()));
  // AdamW computes in f32 whatever its parameter's type.
  Type element;
  if (op->getNumOperands() && !isa<AdamWOp>(op))
    if (auto shaped = dyn_cast<ShapedType>(op->getOperand(0).getType()))
      element = shaped.getElementType();
  double peak = element && element.isBF16() ? device.bf16Flops : device.f32Flops;
  return std::max(flops / peak, bytes / device.memoryBandwidth);
}

double CostModel::collectiveSeconds(StringRef kind, int64_t bytes,
                                    int64_t ranks) const {
  if (ranks <= 1)
    return 0;
  double steps = double(ranks - 1);
  double one = steps * link.latency +
               steps / double(ranks) * double(bytes) / link.bandwidth;
  return kind == "all_reduce" ? 2 * one : one;
}

/// Ranks in the group of `op`, from its grid's static shape.
static std::optional<int64_t> groupSize(CollectiveOpInterface op) {
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      op, op.getGridAttr());
  if (!grid)
    return std::nullopt;
  int64_t size = 1;
  for (int64_t axis : op.getGridAxes()) {
    int64_t extent = grid.getShape()[axis];
    if (ShapedType::isDynamic(extent))
      return std::nullopt;
    size *= extent;
  }
  return size;
}

FailureOr<CostReport> CostModel::estimate(func::FuncOp step) const {
  // The estimate walks one block in order; a step with control flow would
  // be priced by its entry block alone.
  if (!llvm::hasSingleElement(step.getBody()))
    return emitError(getReportLoc(step),
                     "cost model: the step body must be a single block (no "
                     "top-level control flow)");
  CostReport report;
  double compute = 0, comm = 0;
  llvm::DenseMap<Value, double> done; // token -> completion time
  // Offloaded state crosses the host link: read by the op that updates it,
  // and its update written back.
  llvm::SmallPtrSet<Value, 8> offloaded;
  for (BlockArgument arg : step.getArguments())
    if (readPlacement(step, arg.getArgNumber()) == Placement::Host)
      offloaded.insert(arg);
  for (Operation &op : step.front().without_terminator()) {
    if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
      std::optional<int64_t> ranks = groupSize(collective);
      if (!ranks)
        return emitError(getReportLoc(&op),
                         "cost model: the grid of this collective has no "
                         "static size");
      StringRef kind = stringifyCollectiveKind(collective.getCollectiveKind());
      int64_t bytes = kind == "reduce_scatter" ? collective.getInputBytes()
                                               : collective.getResultBytes();
      double seconds = collectiveSeconds(kind, bytes, *ranks);
      report.communicationSeconds += seconds;
      ++report.collectives;
      comm = std::max(comm, compute) + seconds;
      if (collective.isAsync()) {
        done[op.getResult(0)] = comm;
      } else {
        report.exposedSeconds += comm - compute;
        compute = comm;
      }
      continue;
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      double ready = done.lookup(wait.getToken());
      if (ready > compute) {
        report.exposedSeconds += ready - compute;
        compute = ready;
      }
      continue;
    }
    double seconds = 0;
    op.walk([&](Operation *nested) { seconds += opSeconds(nested); });
    // Once a step each, at the first op that reads it.
    for (Value operand : op.getOperands())
      if (offloaded.erase(operand)) {
        double crossing =
            2.0 * double(bytesOf(operand.getType())) / device.hostBandwidth;
        report.offloadSeconds += crossing;
        seconds += crossing;
      }
    if (std::optional<std::pair<double, bool>> nest = loopNest(&op))
      report.flops += flopsOf(*nest);
    report.computeSeconds += seconds;
    compute += seconds;
  }
  report.stepSeconds = std::max(compute, comm);
  return report;
}

llvm::json::Object CostReport::toJSONObject() const {
  return llvm::json::Object{{"step_s", stepSeconds},
                            {"compute_s", computeSeconds},
                            {"communication_s", communicationSeconds},
                            {"exposed_communication_s", exposedSeconds},
                            {"flops", flops},
                            {"collectives", collectives},
                            {"offload_s", offloadSeconds}};
}

std::string CostReport::toJSON() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(toJSONObject());
  return text;
}
