//===- Options.cpp - zshard-run command line ------------------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>

using namespace zshard;
using namespace zshard::run;

namespace {

[[noreturn]] void usage(const std::string &message) {
  throw UsageError(message);
}

int64_t parseInt(const std::string &option, const std::string &text,
                 int64_t minimum,
                 int64_t maximum = std::numeric_limits<int64_t>::max()) {
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  bool bounded = maximum != std::numeric_limits<int64_t>::max();
  if (text.empty() || *end != '\0' || errno == ERANGE || text[0] == ' ' ||
      value < minimum || value > maximum)
    usage(option + " wants an integer " +
          (bounded ? "from " + std::to_string(minimum) + " to " +
                         std::to_string(maximum)
                   : ">= " + std::to_string(minimum)) +
          ", got '" + text + "'");
  return value;
}

uint64_t parseUnsigned(const std::string &option, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || text[0] == '-' ||
      text[0] == ' ' || text[0] == '+')
    usage(option + " wants a non-negative integer, got '" + text + "'");
  return value;
}

/// Whether \p text is exactly one finite decimal number.
bool readFinite(const std::string &text, double &value) {
  errno = 0;
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && errno != ERANGE &&
         std::isfinite(value) && text[0] != ' ';
}

double parsePositive(const std::string &option, const std::string &text) {
  double value = 0;
  if (!readFinite(text, value) || value <= 0)
    usage(option + " wants a finite number > 0, got '" + text + "'");
  return value;
}

/// "--data-inputs INPUTS,TARGETS": two different batch argument names.
void parseDataInputs(const std::string &text, RunOptions &options) {
  size_t comma = text.find(',');
  std::string inputs = text.substr(0, comma);
  std::string targets =
      comma == std::string::npos ? "" : text.substr(comma + 1);
  if (inputs.empty() || targets.empty() ||
      targets.find(',') != std::string::npos || inputs == targets)
    usage("--data-inputs wants two different batch argument names "
          "INPUTS,TARGETS, got '" +
          text + "'");
  options.dataInputs = inputs;
  options.dataTargets = targets;
}

double parseNonNegative(const std::string &option, const std::string &text) {
  double value = 0;
  if (!readFinite(text, value) || value < 0)
    usage(option + " wants a finite number >= 0, got '" + text + "'");
  return value;
}

} // namespace

const char *zshard::run::usageLine() {
  return "usage: zshard-run ARTIFACT.zsa [--ranks N] [--backend "
         "local|mpi|nccl] [--device cpu|cuda] "
         "[--steps N] [--lr F] [--warmup-steps W] "
         "[--lr-decay cosine|linear|constant [--decay-steps S] [--min-lr F]] "
         "[--seed N] "
         "[--data FILE [--data-dtype u16|u32] [--data-inputs IN,TGT]] "
         "[--batch-file F.safetensors] "
         "[--eval-data FILE [--eval-every N] [--eval-steps K]] "
         "[--init-from F.safetensors | --resume F | --resume-full "
         "F.safetensors | --resume auto] [--save F] [--save-full "
         "F.safetensors] [--save-torch F.safetensors] "
         "[--checkpoint-dir D [--save-every N] [--keep K] "
         "[--save-format rank|full]] "
         "[--log-json FILE] [--log FILE] [--stop-on-nan] [--trace FILE.json] "
         "[--memory-timeline FILE.json "
         "[--memory-timeline-step N]] [--link-gbps G] [--link-latency-us L] "
         "[--threads N] [--quiet]";
}

const char *zshard::run::helpText() {
  return R"(zshard-run: load a compiled zshard artifact and train with it.

usage: zshard-run ARTIFACT.zsa [options]
       mpirun -np N zshard-run ARTIFACT.zsa --backend mpi [options]
       mpirun -np N zshard-run ARTIFACT.zsa --device cuda --backend nccl [options]

  --ranks N            ranks to run (default: the artifact's); must be the
                       rank count the artifact was compiled for
  --backend B          local (the default, except under mpirun, see below:
                       the ranks are threads of this process), mpi (one rank
                       per process, under mpirun) or nccl (one rank per GPU
                       process, with --device cuda: under mpirun, or started
                       by hand with ZSHARD_RANK, ZSHARD_WORLD_SIZE and
                       ZSHARD_NCCL_ID_FILE)
  --device D           cpu (default) or cuda: the step's buffers, temporaries
                       and matrix products on this rank's GPU (chosen by
                       ZSHARD_LOCAL_RANK, else OMPI_COMM_WORLD_LOCAL_RANK,
                       else the rank); must be the device the artifact was
                       compiled for (its manifest's target)
  --steps N            steps to run (default 10); after --resume, N more
  --lr F               the 'lr' hyper-parameter, > 0 (default: the lr the
                       artifact records, e.g. the exporter's optimizer's,
                       else 0.001); with a schedule, its peak
  --warmup-steps W     warm the lr up linearly over the first W steps, as
                       nanoGPT's get_lr: step s (from 1) gets
                       lr * s / (W + 1) while s <= W (default 0)
  --lr-decay D         after the warmup: constant (default), or cosine or
                       linear decay from lr to --min-lr, reached at step S + 1
  --decay-steps S      nanoGPT's lr_decay_iters: the decay ends at step S + 1
                       (needs --lr-decay cosine or linear; S > W)
  --min-lr F           the lr at and after the decay's end, in [0, lr]
                       (default 0; needs --lr-decay cosine or linear)
  --seed N             seed of the initialisation and of the data (default 0)
  --data FILE          token file (flat little-endian u16 or u32) for a causal
                       LM step: its two integer [B, T] batch arguments get a
                       window of T tokens and the window shifted by one
                       (found by name: tokens/targets, idx/targets,
                       input_ids/targets, inputs/targets, x/y)
  --data-dtype T       u16 (default, as nanoGPT's train.bin) or u32
  --data-inputs IN,TGT the batch arguments --data feeds: IN the window, TGT
                       the window shifted by one (for other names)
  --batch-file F       safetensors with the batch by argument name, optionally
                       with a leading step axis [S, ...], entry (s-1) mod S
  --eval-data FILE     evaluate with the artifact's eval entry (an artifact
                       compiled for eval, see docs/runtime.md, "Evaluation")
                       on FILE, a token file as --data reads it
                       (--data-dtype, --data-inputs) or a safetensors batch
                       file as --batch-file: the eval loss, on the lines and
                       in --log-json, is the mean loss of its first
                       --eval-steps batches in file order (wrapping), with
                       the parameters of that step, and training goes on
                       unchanged
  --eval-every N       evaluate after every N-th step (default: only after
                       the last step, which always evaluates)
  --eval-steps K       batches per eval, >= 1 (default 1)
  --init-from F        parameters (and optionally optimizer state) to start from,
                       a consolidated file (any rank count)
  --resume F           a checkpoint written by --save: continue after its step
                       (a sharded run reads its rank files F.rank<r>-of-<N>)
  --resume-full F      a consolidated checkpoint (--save-full, or --save of an
                       unsharded run) into any rank count
  --save F             write parameters, optimizer state and the step at the end
                       (a sharded run: one file per rank, F.rank<r>-of-<N>)
  --save-full F        write one consolidated file, as an unsharded run saves
  --save-torch F       write the model's torch state_dict (parameters under
                       their state_dict names, tied weights under each name,
                       folded persistent buffers; no optimizer state), which
                       model.load_state_dict(..., strict=True) loads
  --checkpoint-dir D   save checkpoints in D/step-<step>/ every --save-every
                       steps and at the last step; each is written in a
                       temporary directory and renamed into place when every
                       rank has written, D/latest names the newest, and what
                       a killed save left is removed at the next start
  --save-every N       a checkpoint every N steps (default 0: at the end only)
  --keep K             keep the newest K checkpoints (default 0: all)
  --save-format F      rank (default: each rank its own shard files, read
                       back by the same rank count) or full (one consolidated
                       file, read back by any rank count)
  --resume auto        continue from the newest checkpoint in --checkpoint-dir
                       (or start fresh, from --init-from if given, when there
                       is none); --steps N is then the step the run ends at,
                       so a run restarted after a kill ends where it would
                       have
  --log-json FILE      one JSON object per step: {"step", "loss", "ms",
                       "exposed_comm_ms", ...}
  --log FILE           also write the header and the per-step lines to FILE
                       (plain lines, also with --quiet or on a terminal)
  --stop-on-nan        stop after the first step whose loss is NaN or
                       infinite, with one error line naming the step
                       (status 2, nothing saved)
  --trace FILE         write a Chrome/Perfetto trace (Trace Event Format JSON):
                       per rank a compute lane (steps, blocked in collectives)
                       and a communication lane (each collective)
  --memory-timeline F  write rank 0's live bytes per memory category at every
                       allocation and free of one step, as JSON
  --memory-timeline-step N
                       the step --memory-timeline records (default: the last)
  --link-gbps G        local backend: emulate a slower interconnect of G Gbit/s
                       (every collective takes at least its ring bytes / G), to
                       see overlap on one machine (default 0: no emulation)
  --link-latency-us L  local backend: and L microseconds of latency per
                       collective (default 0)
  --threads N          OpenBLAS threads (default 1; shared by the rank threads)
  --quiet              no per-step lines; only the final JSON summary
  --help, -h, --version

Under mpirun (several processes) without --backend, zshard-run runs one rank
per process over MPI (NCCL with --device cuda) when the runtime is built with
MPI, and refuses otherwise. Each option is given at most once.

Without --data or --batch-file, GPT and MLP steps train on built-in synthetic
data that they can learn. Errors print one line and exit with status 2.
)";
}

RunOptions zshard::run::parseOptions(int argc, char **argv) {
  RunOptions options;
  std::set<std::string> seen;
  auto once = [&](const std::string &name) {
    if (!seen.insert(name).second)
      usage(name + " is given twice");
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      return options;
    }
    if (arg == "--version") {
      options.version = true;
      return options;
    }
    if (arg == "--quiet" || arg == "--stop-on-nan") {
      once(arg);
      (arg == "--quiet" ? options.quiet : options.stopOnNan) = true;
      continue;
    }
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      if (!options.artifact.empty())
        usage("unexpected argument '" + arg + "' (the artifact is '" +
              options.artifact + "')");
      options.artifact = arg;
      continue;
    }
    // --name VALUE or --name=VALUE.
    std::string name = arg, value;
    size_t equals = arg.find('=');
    if (equals != std::string::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    }
    static const char *const valued[] = {"--steps",
                                         "--lr",
                                         "--warmup-steps",
                                         "--lr-decay",
                                         "--decay-steps",
                                         "--min-lr",
                                         "--seed",
                                         "--data",
                                         "--data-dtype",
                                         "--data-inputs",
                                         "--batch-file",
                                         "--eval-data",
                                         "--eval-every",
                                         "--eval-steps",
                                         "--init-from",
                                         "--resume",
                                         "--resume-full",
                                         "--save",
                                         "--save-full",
                                         "--save-torch",
                                         "--checkpoint-dir",
                                         "--save-every",
                                         "--keep",
                                         "--save-format",
                                         "--log-json",
                                         "--log",
                                         "--threads",
                                         "--ranks",
                                         "--backend",
                                         "--device",
                                         "--link-gbps",
                                         "--link-latency-us",
                                         "--trace",
                                         "--memory-timeline",
                                         "--memory-timeline-step"};
    bool known = false;
    for (const char *option : valued)
      known |= name == option;
    if (!known)
      usage("unknown option '" + name + "'");
    once(name);
    if (equals == std::string::npos) {
      if (i + 1 >= argc)
        usage(name + " needs a value");
      value = argv[++i];
    }
    if (name == "--steps")
      options.steps = parseInt(name, value, 0);
    else if (name == "--lr") {
      options.lr = parsePositive(name, value);
      options.lrGiven = true;
    } else if (name == "--eval-every")
      options.evalEvery = parseInt(name, value, 1);
    else if (name == "--eval-steps")
      options.evalSteps = parseInt(name, value, 1);
    else if (name == "--save-every")
      options.saveEvery = parseInt(name, value, 1);
    else if (name == "--keep")
      options.keep = parseInt(name, value, 1);
    else if (name == "--save-format") {
      if (value == "rank")
        options.saveFormat = CheckpointFormat::Rank;
      else if (value == "full")
        options.saveFormat = CheckpointFormat::Full;
      else
        usage("--save-format wants rank or full, got '" + value + "'");
    } else if (name == "--warmup-steps")
      options.warmupSteps = parseInt(name, value, 0);
    else if (name == "--decay-steps")
      options.decaySteps = parseInt(name, value, 1);
    else if (name == "--min-lr") {
      options.minLr = parseNonNegative(name, value);
      options.minLrGiven = true;
    } else if (name == "--lr-decay") {
      if (value == "constant")
        options.lrDecay = LrDecay::Constant;
      else if (value == "cosine")
        options.lrDecay = LrDecay::Cosine;
      else if (value == "linear")
        options.lrDecay = LrDecay::Linear;
      else
        usage("--lr-decay wants cosine, linear or constant, got '" + value +
              "'");
    } else if (name == "--data-inputs")
      parseDataInputs(value, options);
    else if (name == "--seed")
      options.seed = parseUnsigned(name, value);
    else if (name == "--threads")
      options.threads = int(parseInt(name, value, 1, 1024));
    else if (name == "--ranks")
      options.ranks = parseInt(name, value, 1, 1 << 20);
    else if (name == "--link-gbps")
      options.linkGbps = parseNonNegative(name, value);
    else if (name == "--link-latency-us")
      options.linkLatencyUs = parseNonNegative(name, value);
    else if (name == "--memory-timeline-step")
      options.memoryTimelineStep = parseInt(name, value, 1);
    else if (name == "--backend") {
      options.backendGiven = true;
      if (value == "local")
        options.backend = Backend::Local;
      else if (value == "mpi")
        options.backend = Backend::Mpi;
      else if (value == "nccl")
        options.backend = Backend::Nccl;
      else
        usage("--backend wants local, mpi or nccl, got '" + value + "'");
    } else if (name == "--device") {
      if (value == "cpu")
        options.device = DeviceKind::Cpu;
      else if (value == "cuda")
        options.device = DeviceKind::Cuda;
      else
        usage("--device wants cpu or cuda, got '" + value + "'");
    } else if (name == "--data-dtype") {
      if (value == "u16")
        options.dataDType = rt::DType::U16;
      else if (value == "u32")
        options.dataDType = rt::DType::U32;
      else
        usage("--data-dtype wants u16 or u32, got '" + value + "'");
    } else {
      if (value.empty())
        usage(name + " needs a file name");
      std::string &target = name == "--data"             ? options.data
                            : name == "--batch-file"     ? options.batchFile
                            : name == "--eval-data"      ? options.evalData
                            : name == "--init-from"      ? options.initFrom
                            : name == "--resume"         ? options.resume
                            : name == "--resume-full"    ? options.resumeFull
                            : name == "--save"           ? options.save
                            : name == "--save-full"      ? options.saveFull
                            : name == "--save-torch"     ? options.saveTorch
                            : name == "--checkpoint-dir" ? options.checkpointDir
                            : name == "--trace"          ? options.trace
                            : name == "--log"            ? options.logText
                            : name == "--memory-timeline"
                                ? options.memoryTimeline
                                : options.logJson;
      target = value;
    }
  }
  if (options.artifact.empty())
    usage("no artifact given");
  if (options.lrDecay == LrDecay::Constant) {
    for (const char *option : {"--decay-steps", "--min-lr"})
      if (seen.count(option))
        usage(std::string(option) + " needs --lr-decay cosine or linear");
  } else {
    std::string decay =
        std::string("--lr-decay ") + lrDecayName(options.lrDecay);
    if (!seen.count("--decay-steps"))
      usage(decay + " needs --decay-steps S (nanoGPT's lr_decay_iters)");
    if (options.decaySteps <= options.warmupSteps)
      usage("--decay-steps " + std::to_string(options.decaySteps) +
            " must be above --warmup-steps " +
            std::to_string(options.warmupSteps));
  }
  if (options.backend != Backend::Local &&
      (options.linkGbps > 0 || options.linkLatencyUs > 0))
    usage(std::string("--link-gbps and --link-latency-us emulate a link "
                      "between the local backend's thread ranks; --backend ") +
          (options.backend == Backend::Mpi ? "mpi" : "nccl") +
          " runs over the real network");
  if (options.backend == Backend::Nccl && options.device != DeviceKind::Cuda)
    usage("--backend nccl runs on GPUs: it needs --device cuda");
  if (options.backend == Backend::Mpi && options.device == DeviceKind::Cuda)
    usage("--backend mpi moves host memory; with --device cuda use --backend "
          "nccl (under mpirun, NCCL's id travels over MPI)");
  if (options.memoryTimelineStep != 0 && options.memoryTimeline.empty())
    usage("--memory-timeline-step needs --memory-timeline");
  if (!options.data.empty() && !options.batchFile.empty())
    usage("--data and --batch-file exclude each other");
  for (const char *option : {"--data-dtype", "--data-inputs"})
    if (seen.count(option) && options.data.empty() && options.evalData.empty())
      usage(std::string(option) + " needs --data");
  for (const char *option : {"--eval-every", "--eval-steps"})
    if (seen.count(option) && options.evalData.empty())
      usage(std::string(option) + " needs --eval-data");
  if (options.resume == "auto") {
    options.resume.clear();
    options.resumeAuto = true;
    if (options.checkpointDir.empty())
      usage("--resume auto needs --checkpoint-dir (the directory whose newest "
            "checkpoint it continues from)");
    if (!options.resumeFull.empty())
      usage("--resume auto and --resume-full exclude each other");
  }
  for (const char *option : {"--save-every", "--keep", "--save-format"})
    if (seen.count(option) && options.checkpointDir.empty())
      usage(std::string(option) + " needs --checkpoint-dir");
  int starts = !options.initFrom.empty() + !options.resume.empty() +
               !options.resumeFull.empty();
  if (starts > 1)
    usage(!options.initFrom.empty() && !options.resume.empty()
              ? "--init-from and --resume exclude each other"
              : "--init-from, --resume and --resume-full exclude each other");
  return options;
}

rt::DataOptions zshard::run::trainingData(const RunOptions &options,
                                          const rt::RankPlace &place) {
  rt::DataOptions data;
  data.tokenFile = options.data;
  data.tokenDType = options.dataDType;
  data.tokenInputs = options.dataInputs;
  data.tokenTargets = options.dataTargets;
  data.batchFile = options.batchFile;
  data.seed = options.seed;
  data.shard = {int(place.rank), int(place.ranks)};
  return data;
}
