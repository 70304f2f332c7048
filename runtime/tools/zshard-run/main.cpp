//===- main.cpp - zshard-run: train with a compiled artifact --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
//   zshard-run ARTIFACT.zsa [--steps N] [--lr F] [--seed N] [--data F
//              --data-dtype u16|u32] [--batch-file F] [--init-from F |
//              --resume F] [--save F] [--log-json F] [--threads N] [--quiet]
//
// Exit status: 0 on success; 2 on bad usage or any bad input (the artifact,
// a data, batch or state file), with one line "zshard-run: error: ..." on
// stderr.
//
//===----------------------------------------------------------------------===//

#include "Options.h"
#include "Trainer.h"

#include "core/Failure.h"

#include "zshard/runtime/zshard_rt.h"

#include <cstdio>
#include <malloc.h>
#include <new>

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
    run::train(options);
    return 0;
  } catch (const run::UsageError &e) {
    std::fprintf(stderr, "zshard-run: error: %s\n%s\n", e.what(),
                 run::usageLine());
  } catch (const rt::Failure &e) {
    std::fprintf(stderr, "zshard-run: error: %s\n", e.what());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "zshard-run: error: out of memory\n");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "zshard-run: error: %s\n", e.what());
  }
  return 2;
}
