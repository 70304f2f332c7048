#!/usr/bin/env python3
"""Compiled step vs the independent NumPy reference.

Generates a step with zshard-gen, compiles it with zshard-compile, runs it with
zshard-run for a few steps from the same parameters and batches as the
reference (python/zshard_ref), and judges the per-step losses, final
parameters and optimizer state of both float32 implementations (compiled and
NumPy) against a float64 run of the reference with the float32 error budget
of float32_budget.py (docs/testing.md). Exits non-zero naming the first
element out of budget.

With --ranks N (N > 1) the step is compiled for N ranks (--strategy,
--wrap) and run on them, each with --batch sequences of a global batch of
N * --batch, which is what the reference trains on.

usage: compare_with_reference.py --bin BUILD/bin --work DIR --model gpt|llama|mlp
           [generator options...] [--steps 3]
           [--ranks N --strategy S --wrap transformer=PATTERN]
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from zshard_ref import (AdamWConfig, GptConfig, LlamaConfig, MlpConfig,  # noqa: E402
                        clip_coefficient, init_params, loss_and_grads, train_step)
from float32_budget import judge_runs, read_losses  # noqa: E402
from zshard_ref import safetensors_io  # noqa: E402
from e2e_common import run  # noqa: E402




def make_batches(args, cfg, steps, rng):
    """One global batch per step, stacked on a leading step axis."""
    if args.model in ("gpt", "llama"):
        shape = (steps, args.ranks * args.batch, cfg.seq)
        tokens = rng.integers(0, cfg.vocab, size=shape, dtype=np.int32)
        if args.repeated_ids:
            # Few distinct ids, each many times within a row and across rows
            # (the embedding backward must sum them all), and one id in
            # every position of the first row.
            few = np.array([0, 3, cfg.vocab - 1], dtype=np.int32)
            tokens = few[rng.integers(0, len(few), size=tokens.shape)]
            tokens[:, 0, :] = 3
        targets = rng.integers(0, cfg.vocab, size=shape, dtype=np.int32)
        return {"tokens": tokens, "targets": targets}
    x = rng.standard_normal((steps, args.batch, cfg.widths[0])).astype(np.float32)
    if cfg.loss == "mse":
        target = rng.standard_normal((steps, args.batch, cfg.widths[-1])).astype(np.float32)
        return {"x": x, "target": target}
    labels = rng.integers(0, cfg.widths[-1], size=(steps, args.batch), dtype=np.int32)
    return {"x": x, "labels": labels}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--model", choices=("gpt", "llama", "mlp"), required=True)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--d-model", type=int, default=32)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--tied", action="store_true")
    p.add_argument("--kv-heads", type=int, default=2, help="llama")
    p.add_argument("--ffn-hidden", type=int, default=48, help="llama")
    p.add_argument("--rope-theta", type=float, default=10000.0, help="llama")
    p.add_argument("--widths", default="8,16,4")
    p.add_argument("--loss", default="mse")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeated-ids", action="store_true",
                   help="gpt: tokens from three ids only, so that every id repeats")
    p.add_argument("--ranks", type=int, default=1,
                   help="compile and run the step on this many ranks (gpt, llama)")
    p.add_argument("--strategy", default="full_shard", help="with --ranks")
    p.add_argument("--wrap", help="zshard-compile --wrap, with --ranks")
    p.add_argument("--clip-grad-norm", type=float, default=0.0,
                   help="global gradient-norm clipping in both the step and the "
                        "reference; the bound must be small enough to clip step 1")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    w = lambda name: os.path.join(args.work, name)  # noqa: E731

    gen = [os.path.join(args.bin, "zshard-gen"), args.model, "--batch", str(args.batch)]
    if args.model == "gpt":
        cfg = GptConfig(layers=args.layers, d_model=args.d_model, heads=args.heads,
                        vocab=args.vocab, seq=args.seq, tied=args.tied)
        gen += ["--layers", str(args.layers), "--d-model", str(args.d_model),
                "--heads", str(args.heads), "--vocab", str(args.vocab), "--seq", str(args.seq)]
        if args.tied:
            gen.append("--tied")
    elif args.model == "llama":
        cfg = LlamaConfig(layers=args.layers, d_model=args.d_model, heads=args.heads,
                          kv_heads=args.kv_heads, ffn_hidden=args.ffn_hidden,
                          vocab=args.vocab, seq=args.seq, rope_theta=args.rope_theta)
        gen += ["--layers", str(args.layers), "--d-model", str(args.d_model),
                "--heads", str(args.heads), "--kv-heads", str(args.kv_heads),
                "--ffn-hidden", str(args.ffn_hidden), "--vocab", str(args.vocab),
                "--seq", str(args.seq), "--rope-theta", repr(args.rope_theta)]
    else:
        widths = tuple(int(v) for v in args.widths.split(","))
        cfg = MlpConfig(widths=widths, loss=args.loss)
        gen += ["--widths", args.widths, "--loss", args.loss]
    if args.clip_grad_norm:
        gen += ["--clip-grad-norm", repr(args.clip_grad_norm)]
    run(gen + ["-o", w("step.mlir")])
    compile_opts = []
    if args.ranks > 1:
        if args.model == "mlp":
            sys.exit("--ranks applies to gpt and llama")
        compile_opts = ["--strategy", args.strategy, "--ranks", str(args.ranks)]
        if args.wrap:
            compile_opts += ["--wrap", args.wrap]
    run([os.path.join(args.bin, "zshard-compile"), w("step.mlir"), *compile_opts,
         "-o", w("step.zsa")])

    rng = np.random.default_rng(args.seed)
    params = init_params(cfg, seed=args.seed)
    batches = make_batches(args, cfg, args.steps, rng)
    safetensors_io.save_file(w("init.safetensors"), params)
    safetensors_io.save_file(w("batches.safetensors"), batches)

    if args.clip_grad_norm:
        # The test must exercise clipping: the bound has to bite in step 1.
        _, grads = loss_and_grads(cfg, params, {k: v[0] for k, v in batches.items()})
        coef = float(clip_coefficient(grads, args.clip_grad_norm))
        print(f"clip coefficient of step 1: {coef:.6g}")
        if not coef < 1.0:
            sys.exit(f"--clip-grad-norm {args.clip_grad_norm} does not clip step 1")

    ref_losses = []
    ref_params, ref_state = dict(params), None
    for s in range(args.steps):
        batch = {k: v[s] for k, v in batches.items()}
        loss, ref_params, ref_state = train_step(cfg, ref_params, ref_state, batch,
                                                 lr=args.lr, step=s + 1, adamw=AdamWConfig(),
                                                 max_grad_norm=args.clip_grad_norm)
        ref_losses.append(float(loss))

    ranks = ["--ranks", str(args.ranks), "--save-full"] if args.ranks > 1 else ["--save"]
    run([os.path.join(args.bin, "zshard-run"), w("step.zsa"), "--steps", str(args.steps),
         "--lr", repr(args.lr), "--init-from", w("init.safetensors"),
         "--batch-file", w("batches.safetensors"), *ranks, w("out.safetensors"),
         "--log-json", w("log.jsonl"), "--quiet"])

    # Both float32 implementations, the compiled step and the NumPy
    # reference, are judged against a float64 run of the reference with the
    # float32 budget (float32_budget.py, docs/testing.md); the NumPy run
    # passing shows that an independent float32 implementation meets it.
    ref_state = dict(ref_state)
    ref_state.update(ref_params)
    runs = {"compiled step": (read_losses(w("log.jsonl")),
                              safetensors_io.load_file(w("out.safetensors"))),
            "float32 NumPy reference": (ref_losses, ref_state)}
    failures, reports = judge_runs(cfg, params, batches, args.steps, args.lr, AdamWConfig(),
                                   runs, max_grad_norm=args.clip_grad_norm)
    print(json.dumps({"judged": reports}))
    if failures:
        sys.exit("FAIL: " + "; ".join(failures[:4]))
    print(f"OK: {args.steps} steps: the compiled step and the float32 reference are both "
          f"within the float32 budget of the float64 reference (losses within "
          f"{max(r['loss_rel_err'] for r in reports):.3g} relative)")


if __name__ == "__main__":
    main()
