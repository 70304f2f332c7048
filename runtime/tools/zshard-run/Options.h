//===- Options.h - zshard-run command line ----------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_OPTIONS_H
#define ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_OPTIONS_H

#include "CheckpointDir.h"
#include "LrSchedule.h"

#include "core/DType.h"
#include "data/BatchSource.h"
#include "step/Checkpoint.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace zshard::run {

/// How the ranks of a run talk: threads of this process, MPI processes, or
/// NCCL between GPU processes (under mpirun, or started by hand with
/// ZSHARD_RANK, ZSHARD_WORLD_SIZE and ZSHARD_NCCL_ID_FILE).
enum class Backend { Local, Mpi, Nccl };

/// Where the step runs and its buffers live.
enum class DeviceKind { Cpu, Cuda };

/// The lr of a run without --lr whose artifact records none.
constexpr double defaultLr = 1e-3;

/// Everything the command line says.
struct RunOptions {
  std::string artifact;
  int64_t steps = 10;
  /// --lr; without it (lrGiven false) the artifact's recorded lr, else
  /// defaultLr.
  double lr = defaultLr;
  bool lrGiven = false;
  /// --warmup-steps, --lr-decay, --decay-steps, --min-lr (LrSchedule.h);
  /// without them the lr is constant.
  int64_t warmupSteps = 0;
  LrDecay lrDecay = LrDecay::Constant;
  int64_t decaySteps = 0;
  double minLr = 0;
  /// Whether --min-lr was given (it must not exceed the run's lr).
  bool minLrGiven = false;
  uint64_t seed = 0;
  std::string data;
  rt::DType dataDType = rt::DType::U16;
  /// --data-inputs INPUTS,TARGETS: the batch arguments a token file feeds
  /// (the window, and the window shifted by one); empty: recognised by name.
  std::string dataInputs, dataTargets;
  std::string batchFile;
  /// --eval-data FILE (a token file, or *.safetensors as --batch-file),
  /// --eval-every N (0: only after the last step), --eval-steps K (Eval.h).
  std::string evalData;
  int64_t evalEvery = 0;
  int64_t evalSteps = 1;
  std::string initFrom;
  std::string resume;
  std::string resumeFull;
  std::string save;
  std::string saveFull;
  /// --save-torch F: the model's torch state_dict (TorchStateDict.h).
  std::string saveTorch;
  /// --checkpoint-dir D: checkpoints every --save-every N steps (0: only at
  /// the end) and at the last step, --keep K of them (0: all), in
  /// --save-format (CheckpointDir.h).
  std::string checkpointDir;
  int64_t saveEvery = 0;
  int64_t keep = 0;
  CheckpointFormat saveFormat = CheckpointFormat::Rank;
  /// --resume auto: continue from the newest checkpoint of --checkpoint-dir,
  /// or start as without it when there is none; --steps is then the step the
  /// run ends at, not a count of more steps.
  bool resumeAuto = false;
  std::string logJson;
  /// --log: the per-step lines (and the header) also written to this file.
  std::string logText;
  /// --stop-on-nan: stop with an error after a step whose loss is NaN or
  /// infinite.
  bool stopOnNan = false;
  /// --link-gbps, --link-latency-us: the local backend's emulated link (0:
  /// none).
  double linkGbps = 0;
  double linkLatencyUs = 0;
  /// --trace: a Chrome/Perfetto trace of every rank.
  std::string trace;
  /// --memory-timeline: rank 0's live bytes per category through one step,
  /// --memory-timeline-step (0: the last).
  std::string memoryTimeline;
  int64_t memoryTimelineStep = 0;
  int threads = 1;
  /// --ranks; 0 when not given (the artifact's rank count, or the MPI
  /// world's size).
  int64_t ranks = 0;
  Backend backend = Backend::Local;
  /// Whether --backend was given (under mpirun, a run without it uses MPI).
  bool backendGiven = false;
  DeviceKind device = DeviceKind::Cpu;
  bool quiet = false;
  bool help = false;
  bool version = false;
};

/// A command line that cannot be run; the message says why.
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Parses argv. Throws UsageError for unknown options, missing or malformed
/// values, or options that exclude each other.
RunOptions parseOptions(int argc, char **argv);

/// The training data of rank \p place as the command line gives it
/// (--data, --data-dtype, --data-inputs, --batch-file, --seed); the eval
/// data starts from the same options.
rt::DataOptions trainingData(const RunOptions &options,
                             const rt::RankPlace &place);

/// The one-line usage.
const char *usageLine();

/// The full --help text.
const char *helpText();

} // namespace zshard::run

#endif // ZSHARD_RUNTIME_TOOLS_ZSHARD_RUN_OPTIONS_H
