#!/usr/bin/env python3
"""A sharded run reproduces the unsharded one.

Compiles a GPT step twice: unsharded with the global batch N*B, and sharded
over N ranks (zshard-form-units + zshard-shard with a strategy) with B per
rank. Both start from the same parameters (the unsharded run's initial
checkpoint, re-sharded by the runner) and train K steps on the same global
batches. The two runs reduce in different orders (a mean over N*B rows
against an average of N means over B), so they agree to rounding, not bit
for bit: each is judged on its own against a float64 run of the NumPy
reference with the float32 error budget of float32_budget.py (losses, and
every element of every parameter and optimizer-state tensor, consolidated
with --save-full); docs/testing.md says what that guarantees.

usage: sharded_equivalence.py --bin BUILD/bin --work DIR --ranks N --strategy S
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from zshard_ref import AdamWConfig, GptConfig  # noqa: E402
from zshard_ref import safetensors_io  # noqa: E402

from e2e_common import run  # noqa: E402
from float32_budget import judge_runs, read_losses  # noqa: E402

LAYERS, D, HEADS, VOCAB, SEQ = 2, 32, 4, 32, 16


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--replicas", type=int, default=1)
    p.add_argument("--strategy", default="full_shard")
    p.add_argument("--batch", type=int, default=2, help="per-rank batch")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--prefetch", default=None,
                   help="schedule the sharded step with --zshard-async and "
                        "--zshard-prefetch=<these options> (\"\" for the defaults)")
    p.add_argument("--remat", default=None,
                   help="checkpoint the sharded step with --zshard-remat=policy=<this>")
    p.add_argument("--clip-grad-norm", type=float, default=0.0,
                   help="global gradient-norm clipping in both steps (the sharded "
                        "one adds up partial norms across ranks)")
    p.add_argument("--mpiexec", default="",
                   help="run the sharded step as MPI processes with this launcher "
                        "(e.g. 'mpiexec -n 2'), else as threads")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    w = lambda name: os.path.join(args.work, name)  # noqa: E731
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    n, steps = args.ranks, args.steps
    model = ["--layers", str(LAYERS), "--d-model", str(D), "--heads", str(HEADS),
             "--vocab", str(VOCAB), "--seq", str(SEQ)]
    if args.clip_grad_norm:
        model += ["--clip-grad-norm", repr(args.clip_grad_norm)]

    run([tool("zshard-gen"), "gpt", *model, "--batch", str(n * args.batch),
         "-o", w("whole.mlir")])
    run([tool("zshard-compile"), w("whole.mlir"), "-o", w("whole.zsa")])
    gen = run([tool("zshard-gen"), "gpt", *model, "--batch", str(args.batch)],
              capture_output=True, text=True).stdout
    schedule, remat = [], []
    if args.remat:
        remat = [f"--zshard-remat=policy={args.remat}"]
    if args.prefetch is not None:
        schedule = ["--zshard-async", f"--zshard-prefetch={args.prefetch}"]
    units = f"ranks={n} strategy={args.strategy}"
    if args.replicas > 1:
        units += f" replicas={args.replicas}"
    run([tool("zshard-opt"), "-", "--mlir-print-debuginfo", *remat,
         f"--zshard-form-units={units}", "--zshard-shard", *schedule, "-o", w("sharded.mlir")],
        input=gen, text=True)
    run([tool("zshard-compile"), w("sharded.mlir"), "-o", w("sharded.zsa")])

    rng = np.random.default_rng(7)
    shape = (steps, n * args.batch, SEQ)
    batches = {"tokens": rng.integers(0, VOCAB, size=shape, dtype=np.int32),
               "targets": rng.integers(0, VOCAB, size=shape, dtype=np.int32)}
    safetensors_io.save_file(w("batches.safetensors"), batches)
    run([tool("zshard-run"), w("whole.zsa"), "--steps", "0", "--save", w("init.safetensors"),
         "--quiet"])
    common = ["--steps", str(steps), "--lr", repr(args.lr), "--quiet",
              "--batch-file", w("batches.safetensors"), "--init-from", w("init.safetensors")]
    run([tool("zshard-run"), w("whole.zsa"), *common, "--log-json", w("whole.jsonl"),
         "--save", w("whole.safetensors")])
    sharded = [tool("zshard-run"), w("sharded.zsa"), "--ranks", str(n), *common,
               "--log-json", w("sharded.jsonl"), "--save-full", w("sharded.safetensors")]
    if args.mpiexec:
        sharded = args.mpiexec.split() + sharded + ["--backend", "mpi"]
    run(sharded)

    cfg = GptConfig(layers=LAYERS, d_model=D, heads=HEADS, vocab=VOCAB, seq=SEQ, tied=False)
    init = safetensors_io.load_file(w("init.safetensors"))
    runs = {"unsharded": (read_losses(w("whole.jsonl")),
                          safetensors_io.load_file(w("whole.safetensors"))),
            f"{args.strategy} on {n} ranks": (read_losses(w("sharded.jsonl")),
                                              safetensors_io.load_file(w("sharded.safetensors")))}
    failures, reports = judge_runs(cfg, init, batches, steps, args.lr, AdamWConfig(), runs,
                                   max_grad_norm=args.clip_grad_norm)
    print(json.dumps({"ranks": n, "strategy": args.strategy, "judged": reports}))
    if failures:
        sys.exit("FAIL: " + "; ".join(failures[:4]))
    print(f"OK: {args.strategy} on {n} ranks and the unsharded run are both within the "
          f"float32 budget of a float64 run over {steps} steps (losses within "
          f"{max(r['loss_rel_err'] for r in reports):.3g} relative)")


if __name__ == "__main__":
    main()
