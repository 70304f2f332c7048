#!/usr/bin/env python3
"""Gradient accumulation: K microbatches of B train as one batch of K*B.

Compiles a GPT step written for a batch of B with `zshard-compile
--microbatches K` (unsharded, or sharded over N rank threads with
--strategy and --microbatch-gathers), and the same model written for the
whole batch of N*K*B unsharded. Both start from the same parameters and
train --steps steps on the same batches (the accumulating step takes K*B
rows per rank and splits them into microbatches of B itself). Checks:

* the losses agree to 1e-5 relative, and every element of both AdamW
  moments to 1e-4 of the tensor's largest moment (exp_avg_sq at twice
  that, as it squares the gradient's relative error); the parameters
  are compared through the float32 budget instead (both runs against one
  float64 run, float32_budget.py), since AdamW turns rounding noise in a
  vanishing gradient into a step of up to lr either way (docs/testing.md);
* with --check-bytes (sharded only): the reduce-scatter / all-reduce bytes
  per step that zshard-run's trace measures are 1/K of those of K separate
  steps of the step without accumulation at batch B (one reduction per
  step, not per microbatch); the gather bytes are printed per variant;
* the memory plan's peak per rank (--memory-json) is within 10% of the
  peak zshard-run measures.

usage: accumulate.py --bin BUILD/bin --work DIR --microbatches K
                     [--ranks N --strategy S --microbatch-gathers G] [--check-bytes]
"""

import argparse
import json
import os
import sys
from collections import defaultdict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from zshard_ref import AdamWConfig, GptConfig  # noqa: E402
from zshard_ref import safetensors_io  # noqa: E402

from e2e_common import paths, run  # noqa: E402
from float32_budget import judge_runs, read_losses  # noqa: E402

LAYERS, D, HEADS, VOCAB, SEQ = 2, 32, 4, 32, 16
#: Losses of the two runs agree to this, relative.
REL = 1e-5
#: Moments agree to this, relative to the tensor's largest element: the two
#: runs add the gradient up in different orders (a mean of K means against
#: one mean, 1/3 not exact in float32), about 1e-5 of the largest gradient
#: (e.g. 1.3e-5 for 3 microbatches on 3 ranks), well inside the float32
#: budget's 2^-12 (docs/testing.md).
MOMENT_REL = 1e-4


def collective_bytes(trace_path, rank=0):
    """{(kind, step): bytes} of the collectives rank `rank` ran, from a
    zshard-run --trace file (the runtime's own byte counts)."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    out = defaultdict(int)
    for e in events:
        if e.get("cat") != "collective" or e.get("pid") != rank:
            continue
        kind = e["name"].split(" ")[0]
        out[(kind, e["args"]["step"])] += e["args"]["bytes"]
    return out


def per_step(counts, kinds):
    """Bytes per step of the collectives of `kinds`, as a list by step."""
    steps = sorted({s for _, s in counts})
    return [sum(counts.get((k, s), 0) for k in kinds) for s in steps]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--microbatches", type=int, default=2)
    p.add_argument("--batch", type=int, default=2, help="microbatch per rank")
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--strategy", default=None)
    p.add_argument("--microbatch-gathers", default=None)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--remat", default=None,
                   help="also checkpoint (zshard-compile --remat), before accumulating")
    p.add_argument("--check-bytes", action="store_true")
    args = p.parse_args()
    tool, w = paths(args)
    k, n, b, steps = args.microbatches, args.ranks, args.batch, args.steps
    model = ["--layers", str(LAYERS), "--d-model", str(D), "--heads", str(HEADS),
             "--vocab", str(VOCAB), "--seq", str(SEQ)]
    sharding = []
    if args.strategy:
        sharding = ["--strategy", args.strategy, "--ranks", str(n)]
    elif n != 1:
        sys.exit("--ranks needs --strategy")
    if args.remat:
        sharding += ["--remat", args.remat]
    gathers = []
    if args.microbatch_gathers:
        gathers = ["--microbatch-gathers", args.microbatch_gathers]

    run([tool("zshard-gen"), "gpt", *model, "--batch", str(n * k * b), "-o", w("whole.mlir")])
    run([tool("zshard-compile"), w("whole.mlir"), "-o", w("whole.zsa")])
    run([tool("zshard-gen"), "gpt", *model, "--batch", str(b), "-o", w("micro.mlir")])
    run([tool("zshard-compile"), w("micro.mlir"), *sharding, "--microbatches", str(k),
         *gathers, "-o", w("accum.zsa"), "--memory-json", w("accum.plan.json")])
    with open(w("accum.zsa/manifest.json")) as f:
        manifest = json.load(f)
    shapes = {a["name"]: a["shape"] for a in manifest["arguments"] if a["role"] == "batch"}
    if shapes != {"tokens": [k * b, SEQ], "targets": [k * b, SEQ]}:
        sys.exit(f"FAIL: the accumulating step takes batch arguments {shapes}, "
                 f"expected [{k * b}, {SEQ}] each")

    rng = np.random.default_rng(11)
    shape = (steps, n * k * b, SEQ)
    batches = {"tokens": rng.integers(0, VOCAB, size=shape, dtype=np.int32),
               "targets": rng.integers(0, VOCAB, size=shape, dtype=np.int32)}
    safetensors_io.save_file(w("batches.safetensors"), batches)
    run([tool("zshard-run"), w("whole.zsa"), "--steps", "0", "--save", w("init.safetensors"),
         "--quiet"])
    common = ["--lr", repr(args.lr), "--quiet", "--init-from", w("init.safetensors")]
    run([tool("zshard-run"), w("whole.zsa"), "--steps", str(steps), *common,
         "--batch-file", w("batches.safetensors"), "--log-json", w("whole.jsonl"),
         "--save", w("whole.safetensors")])
    accum = run([tool("zshard-run"), w("accum.zsa"), "--ranks", str(n), "--steps", str(steps),
                 *common, "--batch-file", w("batches.safetensors"),
                 "--log-json", w("accum.jsonl"), "--save-full", w("accum.safetensors"),
                 "--trace", w("accum.trace.json")], capture_output=True, text=True).stdout
    measured = json.loads(accum.strip().splitlines()[-1])["rank_peak_bytes"]
    with open(w("accum.plan.json")) as f:
        plan = json.load(f)

    failures = []
    whole_losses, accum_losses = read_losses(w("whole.jsonl")), read_losses(w("accum.jsonl"))
    whole = safetensors_io.load_file(w("whole.safetensors"))
    accum_state = safetensors_io.load_file(w("accum.safetensors"))
    loss_err = max(abs(a - c) / abs(a) for a, c in zip(whole_losses, accum_losses))
    if len(accum_losses) != steps or loss_err > REL:
        failures.append(f"losses {accum_losses} vs one batch of {n * k * b}: {whole_losses} "
                        f"({loss_err:.3g} relative)")
    moment_err = 0.0
    for name, want in whole.items():
        if not name.endswith(("exp_avg", "exp_avg_sq")):
            continue
        got = np.asarray(accum_state[name], np.float64)
        want = np.asarray(want, np.float64)
        # exp_avg_sq is quadratic in the gradient: twice its relative error.
        err = float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))
        err /= 2.0 if name.endswith("exp_avg_sq") else 1.0
        moment_err = max(moment_err, err)
        if err > MOMENT_REL:
            failures.append(f"'{name}' differs by {err:.3g} of its largest element")

    cfg = GptConfig(layers=LAYERS, d_model=D, heads=HEADS, vocab=VOCAB, seq=SEQ, tied=False)
    init = safetensors_io.load_file(w("init.safetensors"))
    what = f"{k} microbatches of {b}" + (f", {args.strategy} on {n} ranks" if n > 1 else "")
    runs = {f"one batch of {n * k * b}": (whole_losses, whole), what: (accum_losses, accum_state)}
    judged, reports = judge_runs(cfg, init, batches, steps, args.lr, AdamWConfig(), runs)
    failures += judged

    # The memory plan prices the accumulating step as the runtime runs it.
    worst = max(r["total"] for r in measured)
    if abs(plan["peak_total"] - worst) > 0.10 * worst:
        failures.append(f"planned peak {plan['peak_total']} bytes, measured {worst}")

    result = {"microbatches": k, "microbatch": b, "ranks": n, "strategy": args.strategy,
              "microbatch_gathers": args.microbatch_gathers,
              "loss_rel_err": loss_err, "moment_rel_err": moment_err,
              "planned_peak_bytes": plan["peak_total"],
              "measured_peak_bytes": max(r["total"] for r in measured), "judged": reports}

    if args.check_bytes:
        # The same step without accumulation, K separate steps of B per rank
        # on the same rows (each step's K*B rows in K pieces).
        if not args.strategy:
            sys.exit("--check-bytes needs --strategy")
        run([tool("zshard-compile"), w("micro.mlir"), *sharding, "-o", w("plain.zsa")])
        rows = batches["tokens"][0].reshape(n, k, b, SEQ).transpose(1, 0, 2, 3)
        targets = batches["targets"][0].reshape(n, k, b, SEQ).transpose(1, 0, 2, 3)
        safetensors_io.save_file(w("plain.safetensors"), {
            "tokens": np.ascontiguousarray(rows.reshape(k, n * b, SEQ)),
            "targets": np.ascontiguousarray(targets.reshape(k, n * b, SEQ))})
        run([tool("zshard-run"), w("plain.zsa"), "--ranks", str(n), "--steps", str(k), *common,
             "--batch-file", w("plain.safetensors"), "--trace", w("plain.trace.json")])
        reduce_kinds = ("reduce_scatter", "all_reduce")
        got = per_step(collective_bytes(w("accum.trace.json")), reduce_kinds)
        plain = per_step(collective_bytes(w("plain.trace.json")), reduce_kinds)
        gathered = per_step(collective_bytes(w("accum.trace.json")), ("all_gather",))
        plain_gathered = per_step(collective_bytes(w("plain.trace.json")), ("all_gather",))
        result.update({"reduce_bytes_per_step": got[0], "reduce_bytes_k_steps": sum(plain),
                       "gather_bytes_per_step": gathered[0] if gathered else 0,
                       "gather_bytes_k_steps": sum(plain_gathered)})
        if len(got) != steps or len(set(got)) != 1 or len(plain) != k:
            failures.append(f"reduce bytes by step: {got} accumulating, {plain} without")
        elif got[0] * k != sum(plain) or got[0] == 0:
            failures.append(f"{got[0]} reduce bytes per accumulating step, {sum(plain)} in "
                            f"{k} steps without: not 1/{k}")

    print(json.dumps(result))
    if failures:
        sys.exit("FAIL: " + "; ".join(failures[:6]))
    print(f"OK: {what} train as one batch of {n * k * b} (losses within {loss_err:.3g}, "
          f"moments within {moment_err:.3g} relative; both runs within the float32 budget)"
          + (f"; {result['reduce_bytes_per_step']} reduce bytes per step against "
             f"{result['reduce_bytes_k_steps']} in {k} steps" if args.check_bytes else ""))


if __name__ == "__main__":
    main()
