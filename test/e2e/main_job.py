#!/usr/bin/python3
"""The README's main job (scripts/main-job.sh) runs and learns.

Runs the job on the built tree with --steps steps (200, fewer than the
README's 600, to keep the test short) and checks what it promises: the token files
are the docs' bytes (the training file decodes to the start of the text),
the sharded step has one unit per Llama decoder layer plus the root, the
memory plan and the measured per-rank table are printed and agree (the
measured total peak of every rank within 1% of the plan's), the mean loss of
the last 10 steps is at least --margin nats below the entropy of the
training bytes' frequencies (3.44 nats: what a model that learned only how
often each byte occurs would reach; measured with 200 steps: 5.50 at step 1,
2.81 over the last 10), the eval loss on the held-out bytes is logged every
100 steps and at the end and is --margin below that entropy too, and the
loss plot is written.
"""

import argparse
import collections
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--margin", type=float, default=0.4)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    env = dict(os.environ, ZSHARD_BUILD_DIR=os.path.dirname(args.bin),
               ZSHARD_WORK_DIR=args.work, ZSHARD_STEPS=str(args.steps))
    run = subprocess.run(["bash", os.path.join(ROOT, "scripts", "main-job.sh")], env=env,
                         capture_output=True, text=True)
    out = run.stdout
    if run.returncode != 0:
        sys.exit(f"FAIL: scripts/main-job.sh exit {run.returncode}: {run.stderr.strip()[-2000:]}")

    with open(os.path.join(ROOT, "docs", sorted(
            f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))[0]), "rb") as f:
        head = f.read(64)
    with open(os.path.join(args.work, "train.bin"), "rb") as f:
        raw = f.read(2 * len(head))
    decoded = bytes(raw[0::2])
    if decoded != head or any(raw[1::2]):
        sys.exit(f"FAIL: train.bin does not start with the docs' bytes as u16: {decoded!r}")

    units = re.findall(r"zshard\.unit @(\S+) on", out)
    if units != ["root", "model.layers.0", "model.layers.1"]:
        sys.exit(f"FAIL: units {units}, expected root and one per decoder layer")
    plan = re.search(r"^total\s+(\d+)$", out, re.M)
    if not plan:
        sys.exit("FAIL: no memory plan total in the output")
    planned = int(plan.group(1))
    losses = [float(m) for m in re.findall(r"^step \d+/\d+  loss (\S+)", out, re.M)]
    if len(losses) != args.steps:
        sys.exit(f"FAIL: {len(losses)} step lines, expected {args.steps}")
    summary = json.loads([l for l in out.splitlines() if l.startswith("{\"steps\"")][-1])
    for rank, peaks in enumerate(summary["rank_peak_bytes"]):
        if abs(peaks["total"] - planned) > 0.01 * planned:
            sys.exit(f"FAIL: rank {rank} peak {peaks['total']} vs the plan's {planned}")
    table = re.findall(r"^\s+(\d)\s+([\d,]+)\s", out, re.M)
    if [r for r, _ in table] != [str(r) for r in range(4)]:
        sys.exit(f"FAIL: the per-rank memory table has rows {table}")
    last = sum(losses[-10:]) / 10
    counts = collections.Counter(open(os.path.join(args.work, "train.bin"), "rb").read()[0::2])
    total = sum(counts.values())
    unigram = -sum(c / total * math.log(c / total) for c in counts.values())
    if not last <= unigram - args.margin:
        sys.exit(f"FAIL: loss {losses[0]:.3f} at step 1, {last:.3f} over the last 10 steps: not "
                 f"{args.margin} below the byte-frequency entropy {unigram:.3f}")
    evals = {}
    with open(os.path.join(args.work, "run.jsonl")) as f:
        for line in f:
            record = json.loads(line)
            if "eval_loss" in record:
                evals[record["step"]] = record["eval_loss"]
    want = sorted(set(range(100, args.steps + 1, 100)) | {args.steps})
    if sorted(evals) != want:
        sys.exit(f"FAIL: eval losses at steps {sorted(evals)}, expected {want}")
    if not evals[args.steps] <= unigram - args.margin:
        sys.exit(f"FAIL: the held-out eval loss {evals[args.steps]:.3f} is not {args.margin} "
                 f"below the byte-frequency entropy {unigram:.3f}")
    png = os.path.join(args.work, "loss.png")
    if not os.path.getsize(png) > 1000:
        sys.exit("FAIL: no loss plot")
    print(json.dumps({"steps": args.steps, "first_loss": losses[0], "last10_mean": last,
                      "byte_entropy": unigram, "eval_losses": evals,
                      "planned_peak": planned,
                      "measured_peaks": [p["total"] for p in summary["rank_peak_bytes"]]}))
    print(f"OK: main job: loss {losses[0]:.3f} -> {last:.3f} in {args.steps} steps "
          f"(held-out {evals[args.steps]:.3f}), "
          f"units {', '.join(units)}, peaks as planned")


if __name__ == "__main__":
    main()
