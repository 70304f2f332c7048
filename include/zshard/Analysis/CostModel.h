//===- CostModel.h - roofline compute and alpha-beta links ------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Predicts the step time of a (sharded, scheduled) training step on tensors
/// for a device and a link: each compute op costs its roofline time, the
/// larger of FLOPs over the device's peak for its element type and bytes
/// moved over memory bandwidth; each collective costs its ring alpha-beta
/// time over the link, `(n-1)·alpha + (n-1)/n · bytes / beta` (twice that
/// for an all-reduce) for a group of n ranks. The step is then simulated in
/// program order with one compute and one communication stream: a start
/// queues its collective on the communication stream, a wait (or a
/// synchronous collective) holds compute until it is done, which is the
/// exposed communication.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_COSTMODEL_H
#define ZSHARD_ANALYSIS_COSTMODEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "zshard/Support/EnumOption.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir {
namespace zshard {

/// A device's peak rates (per second).
struct DeviceModel {
  std::string name;
  double f32Flops = 0;
  double bf16Flops = 0;
  double memoryBandwidth = 0; ///< bytes per second
  /// Bytes per second between device and host memory (PCIe), which
  /// offloaded optimizer state crosses twice a step.
  double hostBandwidth = 0;
};

/// A link's alpha-beta parameters.
struct LinkModel {
  std::string name;
  double bandwidth = 0; ///< bytes per second per rank
  double latency = 0;   ///< seconds per message step
};

/// The devices the cost model knows: the SXM parts' data sheets, and `cpu`
/// (this 2-core machine, measured).
enum class DevicePreset { A100, H100, H200, Cpu };
/// The links the cost model knows.
enum class LinkPreset { NVLink, IB, Eth100, Eth10 };

/// The figures of a preset (its `name` is the preset's option value).
DeviceModel getDeviceModel(DevicePreset preset);
LinkModel getLinkModel(LinkPreset preset);

/// The presets as option values (`device=h100`, `--link ib`), each described
/// by its figures: the one list zshard-cost-model and zshard-compile
/// (--cost-report, --auto) take.
EnumOptionValues getDevicePresetValues();
EnumOptionValues getLinkPresetValues();

/// The predicted figures of one step.
struct CostReport {
  double computeSeconds = 0;     ///< all compute ops, back to back
  double communicationSeconds = 0; ///< all collectives, back to back
  double stepSeconds = 0;        ///< the simulated step
  double exposedSeconds = 0;     ///< compute waiting for communication
  double flops = 0;
  int64_t collectives = 0;
  /// Part of computeSeconds spent reading and writing offloaded state over
  /// the host link.
  double offloadSeconds = 0;

  /// The figures as a JSON object: `step_s`, `compute_s`, `communication_s`,
  /// `exposed_communication_s`, `flops`, `collectives`, `offload_s`.
  llvm::json::Object toJSONObject() const;
  /// toJSONObject() on one line.
  std::string toJSON() const;
};

class CostModel {
public:
  CostModel(DeviceModel device, LinkModel link)
      : device(std::move(device)), link(std::move(link)) {}

  /// Seconds of one compute op (0 for views and ops that move no data).
  double opSeconds(Operation *op) const;
  /// Seconds of a collective of `bytes` (the gathered buffer, the
  /// reduce-scattered input, the all-reduced buffer) over `ranks` ranks.
  double collectiveSeconds(StringRef kind, int64_t bytes, int64_t ranks) const;

  /// Simulates `step` (top-level ops in order); fails on a collective whose
  /// group size is unknown.
  FailureOr<CostReport> estimate(func::FuncOp step) const;

private:
  DeviceModel device;
  LinkModel link;
};

} // namespace zshard
} // namespace mlir

ZSHARD_LISTING_ENUM_PARSER(mlir::zshard::DevicePreset)
ZSHARD_LISTING_ENUM_PARSER(mlir::zshard::LinkPreset)

#endif // ZSHARD_ANALYSIS_COSTMODEL_H
