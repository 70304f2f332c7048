#!/usr/bin/env python3
"""Activation peak and step time of `gpt` small under each remat policy.

One JSON object: per policy of --zshard-remat, the predicted (memory plan)
and measured activation peak, the total peak, the median step time (1 rank,
--threads 1) and the final loss after --steps steps (equal for every
policy). Ratios are against policy none, measured in the same run.

usage: remat.py [--bin build/bin] [--work DIR] [--steps 8]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile

MODEL = ["gpt", "--layers", "4", "--d-model", "256", "--heads", "4", "--vocab", "512",
         "--seq", "128", "--batch", "8"]
POLICIES = ["none", "all", "every=2", "selective"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(os.path.dirname(here), "build", "bin"))
    p.add_argument("--work", default=None)
    p.add_argument("--steps", type=int, default=8)
    args = p.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="zshard-remat-")
    os.makedirs(work, exist_ok=True)
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    w = lambda name: os.path.join(work, name)  # noqa: E731
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    subprocess.run([tool("zshard-gen"), *MODEL, "-o", w("step.mlir")], check=True)
    rows = []
    for policy in POLICIES:
        tag = policy.replace("=", "-")
        subprocess.run([tool("zshard-opt"), w("step.mlir"), "--mlir-print-debuginfo",
                        f"--zshard-remat=policy={policy}", "-o", w(f"{tag}.mlir")], check=True)
        subprocess.run([tool("zshard-compile"), w(f"{tag}.mlir"), "-o", w(f"{tag}.zsa"),
                        "--memory-json", w(f"{tag}.plan.json")], check=True)
        out = subprocess.run([tool("zshard-run"), w(f"{tag}.zsa"), "--steps", str(args.steps),
                              "--threads", "1", "--log-json", w(f"{tag}.jsonl"), "--quiet"],
                             check=True, capture_output=True, text=True, env=env).stdout
        summary = json.loads(out.strip().splitlines()[-1])
        with open(w(f"{tag}.jsonl")) as f:
            ms = [json.loads(line)["ms"] for line in f if line.strip()][1:]
        with open(w(f"{tag}.plan.json")) as f:
            plan = json.load(f)
        rows.append({"policy": policy,
                     "activations_measured": summary["peak_bytes"]["activations"],
                     "activations_predicted": plan["peak"]["activations"],
                     "total_measured": summary["peak_bytes"]["total"],
                     "total_predicted": plan["peak_total"],
                     "step_ms_median": round(statistics.median(ms), 3),
                     "final_loss": summary["final_loss"]})
    base = rows[0]
    for row in rows:
        row["activations_vs_none"] = round(row["activations_measured"] /
                                           base["activations_measured"], 4)
        row["step_time_vs_none"] = round(row["step_ms_median"] / base["step_ms_median"], 4)
    print(json.dumps({"bench": "remat", "model": MODEL, "runs": rows}))


if __name__ == "__main__":
    main()
