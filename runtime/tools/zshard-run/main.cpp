//===- main.cpp - zshard-run: train with a compiled artifact --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
//   zshard-run ARTIFACT.zsa [--ranks N] [--backend local|mpi|nccl]
//              [--device cpu|cuda] [--steps N] [--lr F] [--seed N]
//              [--data F [--data-dtype u16|u32] [--data-inputs IN,TGT]]
//              [--batch-file F] [--init-from F | --resume F |
//              --resume-full F] [--save F] [--save-full F] [--log-json F]
//              [--trace F] [--memory-timeline F [--memory-timeline-step N]]
//              [--link-gbps G] [--link-latency-us L] [--threads N] [--quiet]
//
// Exit status: 0 on success; 2 on bad usage or any bad input (the artifact,
// a data, batch or state file), with one line "zshard-run: error: ..." on
// stderr (under MPI, from rank 0 only).
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "Options.h"
#include "Team.h"
#include "Trainer.h"

#include "core/Failure.h"

#include "zshard/runtime/zshard_rt.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>
#include <optional>
#include <string>
#include <thread>

using namespace zshard;

/// A step allocates and frees the same large buffers every iteration. glibc
/// serves large blocks with mmap and returns them with munmap, so every step
/// paid page faults for all its activations (a quarter of a GPT step's
/// time). Keeping freed memory in the heap lets the next step reuse it; the
/// accounted live bytes are unchanged, only the process keeps the pages.
static void keepFreedMemoryForReuse() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, -1);
}

int main(int argc, char **argv) {
  keepFreedMemoryForReuse();
  try {
    run::RunOptions options = run::parseOptions(argc, argv);
    if (options.help) {
      std::fputs(run::helpText(), stdout);
      return 0;
    }
    if (options.version) {
      std::printf("zshard-run %s\n", zshard_rt_version_string());
      return 0;
    }
    if (std::optional<std::string> note = run::resolveLaunch(
            options, [](const char *name) { return std::getenv(name); },
            zshard_rt_build_features() & ZSHARD_RT_FEATURE_MPI))
      if (!options.quiet && !run::isSecondaryMpiProcess())
        std::fprintf(stderr, "%s\n", note->c_str());
    run::train(options);
    return 0;
  } catch (const run::UsageError &e) {
    if (!run::isSecondaryMpiProcess()) {
      std::fprintf(stderr, "zshard-run: error: %s\n%s\n", e.what(),
                   run::usageLine());
    } else {
      // Rank 0 says the same; mpiexec would end it when this process fails
      // first, before its message is out.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  } catch (const run::LaunchError &e) {
    if (!run::isSecondaryMpiProcess())
      std::fprintf(stderr, "zshard-run: error: %s\n", e.what());
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } catch (const run::AgreedFailure &e) {
    if (!e.quiet)
      std::fprintf(stderr, "zshard-run: error: %s\n", e.what());
  } catch (const rt::Failure &e) {
    std::fprintf(stderr, "zshard-run: error: %s\n", e.what());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "zshard-run: error: out of memory\n");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "zshard-run: error: %s\n", e.what());
  }
  return 2;
}
