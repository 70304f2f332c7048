#!/usr/bin/env python3
"""Fidelity: a nanoGPT-style torch model (tied embeddings), exported with
zshard-export, sharded (default full_shard over 4 ranks), compiled and run
with zshard-run, trains like torch's own eager loop: the same initial weights
(the exported safetensors), the same batches, AdamW as nanoGPT configures it. Both float32 runs, zshard's
and torch's eager one, are judged against torch's eager training of a
float64 copy with the float32 budget (float64_torch.py, docs/testing.md):
every loss, and every parameter and AdamW moment after the last step.

Each rank gets --batch rows; torch trains on the global batch of ranks*batch
rows (the mean of the ranks' mean losses is the global mean).

usage: fidelity.py --bin BUILD/bin --work DIR [--ranks 4] [--strategy full_shard]
                   [--steps 10] [--mpiexec 'mpiexec -n 4']
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import float64_torch  # noqa: E402
import torch  # noqa: E402

from zshard_export import export_step  # noqa: E402
from zshard_export.examples import nanogpt  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=None)
    p.add_argument("--work", required=True)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--strategy", default="full_shard")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=2, help="rows per rank")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--d-model", type=int, default=32)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--mpiexec", default="")
    args = p.parse_args()
    if args.bin:
        os.environ["ZSHARD_BIN"] = args.bin
    torch.set_num_threads(1)
    os.makedirs(args.work, exist_ok=True)
    w = lambda name: os.path.join(args.work, name)  # noqa: E731
    n, steps = args.ranks, args.steps

    model, opt, batch, loss_fn = nanogpt.make(
        layers=args.layers, heads=args.heads, d_model=args.d_model, vocab=args.vocab,
        seq=args.seq, batch=args.batch, lr=args.lr)
    ref_model, ref_opt = common.deepcopy_with_optimizer(model, opt)
    result = export_step(model, opt, batch, loss_fn)
    result.write(w("step.mlir"), w("init.safetensors"), w("step.json"))
    if "lm_head.weight" in result.weights or "transformer.wte.weight" not in result.weights:
        sys.exit("FAIL: the tied embedding is not exported as one parameter")
    common.run([common.tool("zshard-opt"), w("step.mlir"), "--zshard-verify-contract",
                "-o", os.devnull])
    if n > 1 or args.strategy != "none":
        common.shard(w("step.mlir"), w("sharded.mlir"), n, args.strategy)
        compiled_from = w("sharded.mlir")
    else:
        compiled_from = w("step.mlir")
    common.run([common.tool("zshard-compile"), compiled_from, "-o", w("step.zsa")])

    idx, targets = common.random_batches(steps, n * args.batch, args.seq, args.vocab)
    common.save_batches(w("batches.safetensors"), {"idx": idx, "targets": targets})
    cmd = [common.tool("zshard-run"), w("step.zsa"), "--ranks", str(n), "--steps", str(steps),
           "--lr", repr(result.meta["lr"]), "--quiet", "--batch-file", w("batches.safetensors"),
           "--init-from", w("init.safetensors"), "--log-json", w("zshard.jsonl"),
           "--save-full", w("zshard.safetensors")]
    if args.mpiexec:
        cmd = args.mpiexec.split() + cmd + ["--backend", "mpi"]
    common.run(cmd, stdout=open(w("zshard-run.out"), "w"))
    got = common.losses(w("zshard.jsonl"))
    batches = {"idx": idx, "targets": targets}
    traj, init, hypers = float64_torch.trajectory(ref_model, ref_opt, batches, steps)
    want = common.eager_losses(ref_model, ref_opt, batches, steps)
    failures, reports = float64_torch.judge(traj, init, hypers, {
        f"zshard {args.strategy} on {n} ranks": (
            got, common.safetensors_io.load_file(w("zshard.safetensors"))),
        "torch eager float32": (want, float64_torch.torch_state(ref_model, ref_opt))})
    rel = [abs(a - b) / abs(b) for a, b in zip(got, want)]
    print(json.dumps({"ranks": n, "strategy": args.strategy, "steps": steps,
                      "backend": "mpi" if args.mpiexec else "local",
                      "max_rel_loss_diff_vs_torch_f32": max(rel, default=None),
                      "zshard": got, "torch": want, "judged": reports}))
    if len(got) != steps:
        sys.exit(f"FAIL: zshard-run logged {len(got)} losses, expected {steps}")
    if failures:
        sys.exit("FAIL: " + "; ".join(failures[:4]))
    if not want[-1] < want[0]:
        sys.exit("FAIL: the loss did not fall; the comparison would prove little")
    print(f"OK: {args.strategy} on {n} ranks and torch eager both train within the float32 "
          f"budget of torch's float64 training over {steps} steps (losses within "
          f"{max(r['loss_rel_err'] for r in reports):.2e} of float64)")


if __name__ == "__main__":
    main()
