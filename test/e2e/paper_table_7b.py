#!/usr/bin/env python3
"""The FSDP memory table of ARCHITECTURE.md, reproduced at LLaMA-2-7B size.

zshard-gen's llama llama2-7b preset (the Llama-2-7B architecture and shapes:
32 decoder layers, RMSNorm, RoPE, SwiGLU, 6.74e9 parameters; bf16
parameters and gradients, AdamW with an f32 master copy and f32 moments,
shapes only) is planned unsharded and sharded over N = 8 ranks for each
strategy with `zshard-compile --emit=memory-plan --memory-json`. Per rank,
with P parameters and b = 2 bytes:

| strategy      | params    | grads      | optimizer (f32 master + m + v) |
|---------------|-----------|------------|--------------------------------|
| no_shard      | P*b       | P*b        | 12*P                           |
| zero1         | P*b       | P*b/N (1)  | 12*P/N                         |
| shard_grad_op | P*b (2)   | P*b/N (3)  | 12*P/N                         |
| full_shard    | P*b/N     | P*b/N (3)  | 12*P/N                         |

(1) Our zero1 reduce-scatters gradients as ZeRO-2 does; the table's P*b is
an upper bound it beats. (2) shard_grad_op holds its parameters sharded
between steps (P*b/N, "parameters") and gathered for the whole step
(P*b, "communication"): the table's P*b is the gathered copy. (3) Reduced
gradient shards stay in the reduction's dtype, f32 (FSDP's reduce_dtype),
so the sharded strategies hold P*4/N where the table writes P*b/N for
b = 4.

P is computed from the Llama-2-7B shapes (llama_shapes.py, where every
expected figure of this test is written), checked against the count
zshard-gen prints (6738415616, 6.74e9) and against the parameters of the
unsharded plan. Parameters and optimizer state are what the runtime holds for the whole
step (the updates are written in place); the gradient column is the
gradient category's peak. Each figure must be within 1% (shards are padded
to a multiple of N). With the optimizer state offloaded (zshard-offload),
the device holds none of it and the host pool all of it. Activations are
printed, not checked: the table leaves them out.

usage: paper_table_7b.py --bin BUILD/bin --work DIR
"""

import argparse
import json
import subprocess
import sys

from e2e_common import paths, run
from llama_shapes import PUBLISHED, parameter_count, short, state_bytes

N = 8
STRATEGIES = ["no_shard", "zero1", "shard_grad_op", "full_shard"]


def plan(tool, w, name, passes):
    step = w(f"7b-{name}.mlir")
    if passes:
        run([tool("zshard-opt"), w("7b.mlir"), "--mlir-print-debuginfo", *passes, "-o", step])
    else:
        step = w("7b.mlir")
    run([tool("zshard-compile"), step, "--emit=memory-plan", "--memory-json", w(f"7b-{name}.json")],
        stdout=open(w(f"7b-{name}.txt"), "w"))
    return json.load(open(w(f"7b-{name}.json")))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    args = p.parse_args()
    tool, w = paths(args)
    gen = run([tool("zshard-gen"), "llama", "--preset", "llama2-7b", "--dtype", "bf16",
               "-o", w("7b.mlir")], stderr=subprocess.PIPE, text=True)
    print(gen.stderr, end="")
    P = parameter_count("llama2-7b")
    failures = []
    count_line = f"zshard-gen: llama --preset llama2-7b: {P} parameters ({short(P)})"
    if short(P) != PUBLISHED["llama2-7b"] or count_line not in gen.stderr:
        failures.append(f"expected '{count_line}' with {PUBLISHED['llama2-7b']}, "
                        f"zshard-gen printed {gen.stderr.strip()!r}")

    plans = {"no_shard": plan(tool, w, "no_shard", [])}
    for strategy in STRATEGIES[1:]:
        plans[strategy] = plan(tool, w, strategy, [
            f"--zshard-form-units=pattern=model.layers.<i> ranks={N} strategy={strategy}", "--zshard-shard"])
    plans["full_shard+offload"] = plan(tool, w, "full_shard-offload", [
        f"--zshard-form-units=pattern=model.layers.<i> ranks={N} strategy=full_shard", "--zshard-shard",
        "--zshard-offload"])

    b = 2
    if plans["no_shard"]["held"]["parameters"] != P * b:
        failures.append(f"unsharded plan holds {plans['no_shard']['held']['parameters']} "
                        f"parameter bytes, the shapes give P*b = {P * b}")
    expected = {name: state_bytes(name, P, N, b) for name in STRATEGIES}
    expected["full_shard+offload"] = state_bytes("full_shard", P, N, b, offload=True)
    gb = 1e9
    print(f"P = {P / 1e9:.3f} B parameters, N = {N}")
    print(f"{'strategy':20} {'params GB':>10} {'grads GB':>10} {'optim GB':>10} "
          f"{'host GB':>9} {'activ GB':>9} {'peak GB':>9}")
    for name, want_columns in expected.items():
        held, peak = plans[name]["held"], plans[name]["peak"]
        params = held["parameters"]
        if name == "shard_grad_op":
            params = peak["communication"]
            if abs(held["parameters"] - P * b / N) > 0.01 * P * b / N:
                failures.append(f"shard_grad_op: {held['parameters']} bytes of parameter "
                                "shards held, expected P*b/N")
        got = (params, peak["gradients"], held["optimizer_state"])
        print(f"{name:20} {got[0] / gb:10.2f} {got[1] / gb:10.2f} {got[2] / gb:10.2f} "
              f"{held['host_offload'] / gb:9.2f} {peak['activations'] / gb:9.2f} "
              f"{plans[name]['peak_total'] / gb:9.2f}")
        for column, value, want in zip(("params", "grads", "optimizer"), got, want_columns):
            if abs(value - want) > 0.01 * max(want, 1.0) + (0 if want else 1):
                failures.append(f"{name} {column}: {value} bytes, table says {want:.0f}")
    offloaded = plans["full_shard+offload"]["held"]["host_offload"]
    if abs(offloaded - expected["full_shard"][2]) > 0.01 * expected["full_shard"][2]:
        failures.append(f"full_shard+offload: host pool {offloaded} bytes, expected 12P/N")
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print("OK: the memory table of ARCHITECTURE.md holds at 7B size for every strategy")


if __name__ == "__main__":
    main()
