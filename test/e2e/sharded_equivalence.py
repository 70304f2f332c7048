#!/usr/bin/env python3
"""A sharded run reproduces the unsharded one.

Compiles a GPT step twice: unsharded with the global batch N*B, and sharded
over N ranks (zshard-form-units + zshard-shard with a strategy) with B per
rank. Both start from the same parameters (the unsharded run's initial
checkpoint, re-sharded by the runner) and train K steps on the same global
batches. Then:

* the per-step losses (the N-rank run reports the mean of its ranks' losses)
  agree within --rtol;
* every parameter and optimizer-state tensor of the sharded run (consolidated
  with --save-full) agrees with the unsharded one within --rtol of its largest
  element, or, where Adam amplifies rounding (a gradient that is exactly zero,
  like the key slice of c_attn.bias, becomes a full step; over 10 steps two
  correct float32 runs drift apart by a few 1e-5 in single elements), is
  within --f64-slack (4) times the unsharded run's distance to a float64 run
  of the NumPy reference.

The two runs reduce in different orders (a mean over N*B rows against an
average of N means over B), so they agree to rounding, not bit for bit.

usage: sharded_equivalence.py --bin BUILD/bin --work DIR --ranks N --strategy S
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from zshard_ref import AdamWConfig, GptConfig, train_step  # noqa: E402
from zshard_ref import safetensors_io  # noqa: E402

from e2e_common import run  # noqa: E402

LAYERS, D, HEADS, VOCAB, SEQ = 2, 32, 4, 32, 16




def losses(path):
    with open(path) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b))) / max(float(np.max(np.abs(b))), 1e-30)


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
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--prefetch", default=None,
                   help="schedule the sharded step with --zshard-async and "
                        "--zshard-prefetch=<these options> (\"\" for the defaults)")
    p.add_argument("--remat", default=None,
                   help="checkpoint the sharded step with --zshard-remat=policy=<this>")
    p.add_argument("--clip-grad-norm", type=float, default=0.0,
                   help="global gradient-norm clipping in both steps (the sharded "
                        "one adds up partial norms across ranks)")
    p.add_argument("--f64-slack", type=float, default=4.0,
                   help="a tensor off by more than rtol passes if it is within this "
                        "factor of the unsharded run's distance to float64")
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

    # The judge for ill-conditioned tensors: the reference in float64.
    cfg = GptConfig(layers=LAYERS, d_model=D, heads=HEADS, vocab=VOCAB, seq=SEQ, tied=False)
    init = safetensors_io.load_file(w("init.safetensors"))
    exact = {k: np.asarray(v, np.float64) for k, v in init.items() if "." not in k
             or not k.endswith(("exp_avg", "exp_avg_sq"))}
    state = None
    for s in range(steps):
        batch = {k: v[s] for k, v in batches.items()}
        _, exact, state = train_step(cfg, exact, state, batch, lr=args.lr, step=s + 1,
                                     adamw=AdamWConfig(), dtype=np.float64,
                                     max_grad_norm=args.clip_grad_norm)
    exact.update(state)

    failures = []
    a, b = losses(w("sharded.jsonl")), losses(w("whole.jsonl"))
    loss_err = max((abs(x - y) / abs(y) for x, y in zip(a, b)), default=1.0)
    if len(a) != steps or len(b) != steps or loss_err > args.rtol:
        failures.append(f"losses differ by {loss_err:.3g} relative")
    got = safetensors_io.load_file(w("sharded.safetensors"))
    want = safetensors_io.load_file(w("whole.safetensors"))
    worst, judged = ("", 0.0), []
    for name, ref in want.items():
        if name not in got:
            failures.append(f"the sharded checkpoint lacks '{name}'")
            continue
        e = rel(got[name], ref)
        if e > args.rtol and name in exact:
            e_sharded, e_whole = rel(got[name], exact[name]), rel(ref, exact[name])
            judged.append({"tensor": name, "vs_unsharded": e,
                           "sharded_vs_f64": e_sharded, "unsharded_vs_f64": e_whole})
            if e_sharded <= args.f64_slack * e_whole:
                continue
        if e > worst[1]:
            worst = (name, e)
    if worst[1] > args.rtol:
        failures.append(f"'{worst[0]}' differs by {worst[1]:.3g} relative")
    print(json.dumps({"ranks": n, "strategy": args.strategy, "loss_rel_err": loss_err,
                      "losses": list(zip(a, b)), "worst_tensor": worst,
                      "judged_against_f64": judged}))
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print(f"OK: {args.strategy} on {n} ranks reproduces the unsharded run over {steps} steps: "
          f"losses within {loss_err:.3g}, {len(want)} tensors within {args.rtol:g} "
          f"({len(judged)} judged against float64)")


if __name__ == "__main__":
    main()
