//===- RunChecks.cpp - Whether an artifact fits a zshard-run run ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "RunChecks.h"

#include "core/Failure.h"
#include "core/Shape.h"

#include <cerrno>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

using namespace zshard;
using namespace zshard::rt;
using namespace zshard::run;

std::string zshard::run::gridText(const Manifest &manifest) {
  return manifest.grid ? "grid '" + manifest.grid->name + "' " +
                             shapeString(manifest.grid->shape)
                       : "no grid";
}

void zshard::run::checkRanks(const Manifest &manifest,
                             const RunOptions &options, int64_t ranks) {
  if (ranks == 0 || ranks == manifest.ranks)
    return;
  std::string run =
      options.backend != Backend::Local
          ? std::string("the ") +
                (options.backend == Backend::Mpi ? "MPI" : "NCCL") +
                " world has " + std::to_string(ranks) + " processes"
          : "--ranks " + std::to_string(ranks);
  if (!manifest.sharded())
    fail(manifest.path +
         ": the artifact is single-rank (ranks 1, no grid), "
         "and " +
         run + ": compile it for " + std::to_string(ranks) +
         " ranks to run it sharded");
  std::string runIt = options.backend != Backend::Local
                          ? "run it under mpirun -np "
                          : "run it with --ranks ";
  fail(manifest.path + ": the artifact is compiled for " +
       std::to_string(manifest.ranks) + " ranks (" + gridText(manifest) +
       "), and " + run + " (compile it for " + std::to_string(ranks) +
       " ranks, or " + runIt + std::to_string(manifest.ranks) + ")");
}

void zshard::run::checkTarget(const Manifest &manifest,
                              const RunOptions &options) {
  bool onGpu = options.device == DeviceKind::Cuda;
  if (manifest.target == "cuda" && !onGpu)
    fail(manifest.path + ": the artifact is compiled for CUDA (target 'cuda'" +
         (manifest.chip.empty() ? "" : ", chip " + manifest.chip) +
         "); run it with --device cuda, or compile the step without "
         "--target=cuda to run it on the CPU");
  if (manifest.target == "cpu" && onGpu)
    fail(manifest.path +
         ": the artifact is compiled for the CPU (target 'cpu'); run it "
         "without --device cuda, or compile the step with --target=cuda");
}

void zshard::run::checkHypers(const Manifest &manifest) {
  for (const ArgumentDesc &arg : manifest.arguments) {
    if (arg.role != ArgRole::Hyper)
      continue;
    if (arg.name != "lr" && arg.name != "step")
      fail(manifest.path + ": hyper '" + arg.name +
           "' has no value: zshard-run supplies the hypers lr and step");
    if (!isFloatDType(arg.type.dtype))
      fail(manifest.path + ": hyper '" + arg.name + "' is " +
           manifestName(arg.type.dtype) + "; zshard-run supplies a float");
  }
}

void zshard::run::checkWritable(const std::string &path) {
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "."
                    : slash == 0               ? "/"
                                               : path.substr(0, slash);
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    fail(path + ": cannot write: " + std::strerror(errno));
}

bool zshard::run::fileExists(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}
