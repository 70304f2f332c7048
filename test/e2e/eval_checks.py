#!/usr/bin/env python3
"""The eval entry (zshard-compile --eval, zshard-run --eval-data) end to end.

Compiles a tiny GPT step with --eval (unsharded, or sharded with --strategy
over --ranks rank threads) and checks, on batch files of random tokens:

  same batch    training on one batch every step with --eval-data that batch
                and --eval-every 1: the eval loss after step s is the loss
                step s + 1 reports (the same parameters, before its update,
                the same batch), bit for bit, and the last step evaluates;
  no effect     the run with eval has the training losses, bit for bit, and
                the final state of the run without it;
  mean, wrap    --eval-every 2 --eval-steps 3 over a file of two batches
                evaluates after steps 2 and 4 only, and its eval loss is the
                mean of the eval losses of batch 0, 1 and 0 (each evaluated
                alone);
  token file    a token file as --eval-data gives the eval loss of the batch
                file holding its windows in file order (rows wrapping around
                the file), bit for bit;
  manifest      the manifest's "eval" names eval.so and entry zshard_eval,
                with a planned peak below the training step's.

usage: eval_checks.py --bin BUILD/bin --work DIR [--strategy S --ranks N]
                      [--compile-flags FLAGS]
"""

import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from zshard_ref import safetensors_io  # noqa: E402

from e2e_common import paths, run  # noqa: E402

LAYERS, D, HEADS, VOCAB, SEQ, BATCH = 2, 32, 4, 32, 16, 2


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def batches(rng, entries, rows):
    shape = (entries, rows, SEQ) if entries else (rows, SEQ)
    return {"tokens": rng.integers(0, VOCAB, size=shape, dtype=np.int32),
            "targets": rng.integers(0, VOCAB, size=shape, dtype=np.int32)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--strategy", default="")
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--compile-flags", default="",
                   help="more zshard-compile flags, e.g. '--remat all' or '--replicas 2'")
    args = p.parse_args()
    tool, w = paths(args)
    n = args.ranks
    failures = []

    def check(ok, message):
        print(("ok:   " if ok else "FAIL: ") + message, flush=True)
        if not ok:
            failures.append(message)

    run([tool("zshard-gen"), "gpt", "--layers", str(LAYERS), "--d-model", str(D),
         "--heads", str(HEADS), "--vocab", str(VOCAB), "--seq", str(SEQ),
         "--batch", str(BATCH), "-o", w("gpt.mlir")])
    shard = ["--strategy", args.strategy, "--ranks", str(n)] if args.strategy else []
    shard += args.compile_flags.split()
    plan = run([tool("zshard-compile"), w("gpt.mlir"), *shard, "--eval", "--memory-report",
                "-o", w("gpt.zsa")], capture_output=True, text=True).stdout
    print(plan)
    with open(w("gpt.zsa/manifest.json")) as f:
        manifest = json.load(f)
    totals = [int(t) for t in re.findall(r"^total\s+(\d+)$", plan, re.M)]
    entry = manifest.get("eval", {})
    check(entry.get("library") == "eval.so" and entry.get("entry") == "zshard_eval"
          and os.path.exists(w("gpt.zsa/eval.so")),
          f"the manifest names eval.so and zshard_eval: {entry}")
    check(len(totals) == 2 and entry.get("peak_bytes") == totals[1] and totals[1] < totals[0],
          f"eval peak {totals[1:]} (the manifest's {entry.get('peak_bytes')}) is below "
          f"the step's {totals[:1]} bytes per rank")

    rng = np.random.default_rng(11)
    safetensors_io.save_file(w("same.safetensors"), batches(rng, 0, n * BATCH))
    two = batches(rng, 2, n * BATCH)
    safetensors_io.save_file(w("two.safetensors"), two)
    for k in range(2):
        safetensors_io.save_file(w(f"two{k}.safetensors"),
                                 {name: t[k] for name, t in two.items()})

    zrun = [tool("zshard-run"), w("gpt.zsa"), "--ranks", str(n), "--quiet"]
    quiet = {"stdout": subprocess.DEVNULL}
    steps = 4
    train = ["--steps", str(steps), "--batch-file", w("same.safetensors")]

    # The same batch: eval after step s == the loss of step s + 1.
    run(zrun + train + ["--eval-data", w("same.safetensors"), "--eval-every", "1",
                        "--log-json", w("eval.jsonl"), "--save-full", w("eval.safetensors")], **quiet)
    log = read_log(w("eval.jsonl"))
    losses = [r["loss"] for r in log]
    evals = [r.get("eval_loss") for r in log]
    check(all(e is not None for e in evals), f"every step evaluated: {evals}")
    pairs = list(zip(evals[:-1], losses[1:]))
    check(all(e == l for e, l in pairs),
          f"eval loss after step s == train loss of step s + 1, bit for bit: {pairs}")

    # Eval leaves training alone.
    run(zrun + train + ["--log-json", w("plain.jsonl"),
                        "--save-full", w("plain.safetensors")], **quiet)
    plain = [r["loss"] for r in read_log(w("plain.jsonl"))]
    check(plain == losses, f"training losses with and without eval are identical: {plain}")
    with open(w("eval.safetensors"), "rb") as f, open(w("plain.safetensors"), "rb") as g:
        check(f.read() == g.read(), "the final state with and without eval is identical")

    # The mean over --eval-steps batches, wrapping around the file.
    run(zrun + train + ["--eval-data", w("two.safetensors"), "--eval-every", "2",
                        "--eval-steps", "3", "--log-json", w("mean.jsonl")], **quiet)
    mean = {r["step"]: r["eval_loss"] for r in read_log(w("mean.jsonl")) if "eval_loss" in r}
    check(sorted(mean) == [2, 4], f"--eval-every 2 over 4 steps evaluates after 2 and 4: "
                                  f"{sorted(mean)}")
    single = []
    for k in range(2):
        run(zrun + train + ["--eval-data", w(f"two{k}.safetensors"), "--eval-every", "2",
                            "--log-json", w(f"single{k}.jsonl")], **quiet)
        single.append({r["step"]: r["eval_loss"]
                       for r in read_log(w(f"single{k}.jsonl")) if "eval_loss" in r})
    for s in sorted(mean):
        want = (2 * single[0][s] + single[1][s]) / 3
        check(abs(mean[s] - want) <= 1e-12 * abs(want),
              f"step {s}: eval loss of 3 batches {mean[s]!r} is the mean of batches "
              f"0, 1, 0: {want!r}")

    # A token file, read in order: windows w = g mod W for row g of batch k.
    windows = 5
    tokens = rng.integers(0, VOCAB, size=windows * SEQ + 1, dtype=np.uint16)
    tokens.tofile(w("val.bin"))
    k_steps, rows = 3, n * BATCH
    g = np.arange(k_steps * rows).reshape(k_steps, rows) % windows
    starts = g[..., None] * SEQ + np.arange(SEQ)
    safetensors_io.save_file(w("val.safetensors"),
                             {"tokens": tokens[starts].astype(np.int32),
                              "targets": tokens[starts + 1].astype(np.int32)})
    got = {}
    for name in ("val.bin", "val.safetensors"):
        run(zrun + train + ["--eval-data", w(name), "--eval-steps", str(k_steps),
                            "--log-json", w(name + ".jsonl")], **quiet)
        got[name] = [r.get("eval_loss") for r in read_log(w(name + ".jsonl"))]
    check(got["val.bin"] == got["val.safetensors"] and got["val.bin"][-1] is not None
          and all(e is None for e in got["val.bin"][:-1]),
          f"a token file evaluates its windows in order, after the last step only: {got}")

    # bench/plot_run.py draws the eval loss beside the train loss.
    try:
        import matplotlib  # noqa: F401
        drawn = run([sys.executable, os.path.join(HERE, "..", "..", "bench", "plot_run.py"),
                     "--log", w("mean.jsonl"), "-o", w("run.png")],
                    capture_output=True, text=True).stdout
        check(os.path.getsize(w("run.png")) > 0 and '"loss"' in drawn,
              f"plot_run.py draws the eval loss: {drawn.strip()}")
    except ImportError:
        print("skip: no matplotlib for plot_run.py")

    label = f"{args.strategy} on {n} ranks" if args.strategy else "unsharded"
    if failures:
        sys.exit(f"FAIL ({label}): " + "; ".join(failures))
    print(f"OK ({label}): eval losses {evals} equal the next steps' losses; eval "
          f"peak {totals[1]} vs step peak {totals[0]} bytes per rank")


if __name__ == "__main__":
    main()
