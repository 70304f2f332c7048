#!/usr/bin/env python3
"""The automatic choice for LLaMA-2-70B-sized steps, checked at full size.

zshard-gen's llama2-70b preset (80 GPT-style blocks at LLaMA-2-70B widths,
bf16 parameters with f32 master copy and moments, seq 4096, shapes only)
goes through `zshard-compile --auto --emit=memory-plan` for H100s over
InfiniBand with 80 GiB per rank:

- on 64 ranks, full_shard with activation checkpointing is chosen;
- on 8 ranks nothing fits with the optimizer state in device memory (16
  bytes a parameter over 8 ranks is 140 GB before activations); with it
  offloaded to host memory full_shard with checkpointing fits and is chosen,
  and its host pool is printed. (When nothing fits at all, the error names
  the shortfall: test/Pipelines/zshard-compile-auto.mlir.)

usage: paper_scale.py --bin BUILD/bin --work DIR
"""

import argparse
import subprocess
import sys

from e2e_common import paths, run


def auto(tool, step, ranks):
    return subprocess.run([tool("zshard-compile"), step, "--auto", "--ranks", str(ranks),
                           "--memory-per-rank", "80GiB", "--device", "h100", "--link", "ib",
                           "--emit=memory-plan"], capture_output=True, text=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    args = p.parse_args()
    tool, w = paths(args)
    run([tool("zshard-gen"), "gpt", "--preset", "llama2-70b", "--dtype", "bf16",
         "-o", w("llama2-70b.mlir")])
    failures = []

    wide = auto(tool, w("llama2-70b.mlir"), 64)
    print(wide.stdout, wide.stderr, sep="\n")
    chosen = [line for line in wide.stdout.splitlines() if "chosen" in line]
    if wide.returncode != 0 or len(chosen) != 1 or not chosen[0].startswith("full_shard+remat "):
        failures.append(f"64 ranks: expected full_shard+remat chosen, got {chosen or wide.stderr}")

    narrow = auto(tool, w("llama2-70b.mlir"), 8)
    print(narrow.stdout, narrow.stderr, sep="\n")
    chosen = [line for line in narrow.stdout.splitlines() if "chosen" in line]
    fitting = [line for line in narrow.stdout.splitlines() if " fits" in line or "chosen" in line]
    if (narrow.returncode != 0 or len(chosen) != 1
            or not chosen[0].startswith("full_shard+remat+offload ")
            or any("+offload" not in line for line in fitting)
            or "host pool per rank for full_shard+remat+offload" not in narrow.stdout):
        failures.append(f"8 ranks: expected full_shard+remat+offload chosen and nothing fitting "
                        f"without offload, got {chosen or narrow.stderr}")

    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print("OK: 70B on 64 x 80 GiB chooses full_shard+remat; on 8 x 80 GiB "
          "full_shard+remat+offload")


if __name__ == "__main__":
    main()
