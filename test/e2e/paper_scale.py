#!/usr/bin/env python3
"""The automatic choice for Llama-2-70B, checked at full size.

zshard-gen's `llama --preset llama2-70b` (the Llama-2-70B architecture and
shapes: 80 decoder layers, RMSNorm, RoPE, SwiGLU, grouped-query attention
with 8 kv heads, 6.90e10 parameters; bf16 parameters with f32 master copy
and moments, seq 4096, shapes only) goes through `zshard-compile --auto
--emit=memory-plan` for H100s over InfiniBand with 80 GiB per rank:

- on 64 ranks, full_shard with activation checkpointing is chosen;
- on 8 ranks nothing fits with the optimizer state in device memory (the
  table's 2 + 4 + 12 bytes a parameter over 8 ranks is 155 GB before
  activations); with it offloaded to host memory full_shard with
  checkpointing fits and is chosen, and its host pool is printed. (When
  nothing fits at all, the error names the shortfall:
  test/Pipelines/zshard-compile-auto.mlir.)

P is computed from the shapes (llama_shapes.py, where the expected memory
figures are written once) and checked against the count zshard-gen prints;
the chosen plans' parameters, gradient peak, optimizer state and host pool
per rank must be the memory table's within 1%. The two --auto runs run side by side.

usage: paper_scale.py --bin BUILD/bin --work DIR
"""

import argparse
import subprocess
import sys

from e2e_common import paths, run
from llama_shapes import GIB, PUBLISHED, parameter_count, short, state_bytes

PRESET = "llama2-70b"
BUDGET = 80 * GIB
B = 2  # bf16
# The choice per rank count. The activation figures (attention) steer it
# between the candidates the state leaves room for.
EXPECTED = {64: "full_shard+remat", 8: "full_shard+remat+offload"}


def plan_bytes(report):
    """{category: (bytes held by the runtime, peak bytes)} of the memory plan
    table."""
    rows = {}
    for line in report.splitlines():
        cols = line.split()
        if len(cols) == 4 and cols[1].isdigit():
            rows[cols[0]] = (int(cols[1]), int(cols[2]))
    return rows


def check(ranks, result, P, failures):
    out = result.stdout
    print(out, result.stderr, sep="\n")
    want = EXPECTED[ranks]
    chosen = [line for line in out.splitlines() if "chosen" in line]
    if result.returncode != 0 or len(chosen) != 1 or chosen[0].split()[0] != want:
        failures.append(f"{ranks} ranks: expected {want} chosen, got {chosen or result.stderr}")
        return
    offload = want.endswith("+offload")
    params, grads, optim = state_bytes("full_shard", P, ranks, B, offload=offload)
    rows = plan_bytes(out)
    host = state_bytes("full_shard", P, ranks, B)[2] if offload else 0
    # Parameters, optimizer state and host pool held for the whole step; the
    # gradient shards at their peak.
    for category, column, expected in (("parameters", 0, params), ("gradients", 1, grads),
                                       ("optimizer_state", 0, optim),
                                       ("host_offload", 0, host)):
        got = rows[category][column] if category in rows else None
        if got is None or abs(got - expected) > 0.01 * max(expected, 1):
            failures.append(f"{ranks} ranks, {want}: {category} {('held', 'peak')[column]} "
                            f"{got} bytes, the memory table says {expected:.0f}")
    if offload:
        # The state alone of every candidate without offload is over budget.
        without = sum(state_bytes("full_shard", P, ranks, B))
        if without <= BUDGET:
            failures.append(f"{ranks} ranks: expected the state to exceed the budget, "
                            f"{without} bytes")
        fitting = [line for line in out.splitlines() if " fits" in line or "chosen" in line]
        if (any("+offload" not in line for line in fitting)
                or f"host pool per rank for {want}" not in out):
            failures.append(f"{ranks} ranks: expected nothing to fit without offload and "
                            f"the host pool of {want} printed")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    args = p.parse_args()
    tool, w = paths(args)
    step = w(f"{PRESET}.mlir")
    gen = run([tool("zshard-gen"), "llama", "--preset", PRESET, "--dtype", "bf16", "-o", step],
              stderr=subprocess.PIPE, text=True)
    print(gen.stderr, end="")
    P = parameter_count(PRESET)
    failures = []
    count_line = f"zshard-gen: llama --preset {PRESET}: {P} parameters ({short(P)})"
    if short(P) != PUBLISHED[PRESET] or count_line not in gen.stderr:
        failures.append(f"expected '{count_line}' with {PUBLISHED[PRESET]}, "
                        f"zshard-gen printed {gen.stderr.strip()!r}")

    procs = {ranks: subprocess.Popen(
        [tool("zshard-compile"), step, "--auto", "--ranks", str(ranks),
         "--memory-per-rank", "80GiB", "--device", "h100", "--link", "ib",
         "--emit=memory-plan"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for ranks in EXPECTED}
    for ranks, proc in procs.items():
        stdout, stderr = proc.communicate()
        check(ranks, subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr),
              P, failures)

    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print(f"OK: Llama-2-70B ({short(P)} parameters) on 64 x 80 GiB chooses "
          f"{EXPECTED[64]}; on 8 x 80 GiB {EXPECTED[8]}")


if __name__ == "__main__":
    main()
