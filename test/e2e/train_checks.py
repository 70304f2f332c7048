#!/usr/bin/env python3
"""End-to-end training checks of compiled steps (zshard-gen -> zshard-compile -> zshard-run).

  learn   a tiny GPT learns the built-in synthetic sequence: loss below 0.1
          within 300 steps
  resume  6 steps in one run give the same losses, bit for bit, and the same
          final checkpoint as 3 steps, --save, --resume and 3 more

usage: train_checks.py learn|resume --bin BUILD/bin --work DIR
"""

import argparse
import json
import os
import sys

from e2e_common import run

GPT_TINY = ["gpt", "--layers", "2", "--d-model", "32", "--heads", "4",
            "--vocab", "32", "--seq", "16", "--batch", "8"]




def losses(path):
    with open(path) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]


def build(args):
    os.makedirs(args.work, exist_ok=True)
    step = os.path.join(args.work, "gpt.mlir")
    artifact = os.path.join(args.work, "gpt.zsa")
    run([os.path.join(args.bin, "zshard-gen")] + GPT_TINY + ["-o", step])
    run([os.path.join(args.bin, "zshard-compile"), step, "-o", artifact])
    return artifact


def learn(args):
    artifact = build(args)
    log = os.path.join(args.work, "learn.jsonl")
    run([os.path.join(args.bin, "zshard-run"), artifact, "--steps", "300",
         "--log-json", log, "--quiet"])
    values = losses(log)
    first, last = values[0], values[-1]
    below = next((i + 1 for i, v in enumerate(values) if v < 0.1), None)
    print(json.dumps({"first_loss": first, "final_loss": last,
                      "first_step_below_0.1": below}))
    if below is None or last >= 0.1:
        sys.exit(f"FAIL: loss went from {first:.4f} to {last:.4f} in 300 steps; "
                 f"expected below 0.1")
    print(f"OK: loss {first:.4f} -> {last:.6f}, below 0.1 from step {below}")


def resume(args):
    artifact = build(args)
    zrun = os.path.join(args.bin, "zshard-run")
    w = lambda name: os.path.join(args.work, name)  # noqa: E731
    run([zrun, artifact, "--steps", "6", "--log-json", w("full.jsonl"),
         "--save", w("full.safetensors"), "--quiet"])
    run([zrun, artifact, "--steps", "3", "--log-json", w("a.jsonl"),
         "--save", w("half.safetensors"), "--quiet"])
    run([zrun, artifact, "--resume", w("half.safetensors"), "--steps", "3",
         "--log-json", w("b.jsonl"), "--save", w("resumed.safetensors"), "--quiet"])
    full = losses(w("full.jsonl"))
    split = losses(w("a.jsonl")) + losses(w("b.jsonl"))
    if full != split:
        sys.exit(f"FAIL: losses differ after resume:\n  uninterrupted {full}\n  resumed       {split}")
    with open(w("full.safetensors"), "rb") as f, open(w("resumed.safetensors"), "rb") as g:
        if f.read() != g.read():
            sys.exit("FAIL: the checkpoints after 6 steps differ between the "
                     "uninterrupted and the resumed run")
    print(f"OK: 6 losses identical bit for bit and identical checkpoints: {full}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("check", choices=("learn", "resume"))
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    args = p.parse_args()
    {"learn": learn, "resume": resume}[args.check](args)


if __name__ == "__main__":
    main()
