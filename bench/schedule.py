#!/usr/bin/env python3
"""The figures of the scheduling and memory-plan work, as one JSON object.

1. Prefetch: `gpt` small (d256, 4 layers, vocab 512, seq 128, batch 2 per
   rank) sharded full_shard over 4 ranks, compiled three ways -- no schedule
   (synchronous collectives), `--zshard-async --zshard-prefetch` (defaults:
   forward depth 1, backward pre), and the same with the root unit kept
   gathered (`no-reshard=root`) -- and run side by side on the local backend
   with an emulated link (bench/overlap.py): step time, exposed
   communication, and per kind of collective the part of its time hidden
   behind compute.
2. Memory: for every strategy, the static plan's predicted peak per rank
   (`zshard-compile --memory-json`) against the peak the runtime measures.

usage: schedule.py [--bin build/bin] [--work DIR] [--link-gbps 10] [--steps 12]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import overlap  # noqa: E402

MODEL = ["gpt", "--layers", "4", "--d-model", "256", "--heads", "4", "--vocab", "512",
         "--seq", "128", "--batch", "2"]
STRATEGIES = ["no_shard", "zero1", "shard_grad_op", "full_shard", "hybrid_shard",
              "hybrid_shard_zero2"]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(os.path.dirname(HERE), "build", "bin"))
    p.add_argument("--work", default=None)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--link-gbps", type=float, default=10.0)
    p.add_argument("--link-latency-us", type=float, default=0.0)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--warmup", type=int, default=2)
    args = p.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="zshard-schedule-")
    os.makedirs(work, exist_ok=True)
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    w = lambda name: os.path.join(work, name)  # noqa: E731
    n = args.ranks

    run([tool("zshard-gen"), *MODEL, "-o", w("step.mlir")])
    variants = {
        "no_prefetch": (f"ranks={n} strategy=full_shard", []),
        "prefetch": (f"ranks={n} strategy=full_shard",
                     ["--zshard-async", "--zshard-prefetch"]),
        "prefetch_root_kept": (f"ranks={n} strategy=full_shard no-reshard=root",
                               ["--zshard-async", "--zshard-prefetch"]),
    }
    artifacts = {}
    for name, (units, schedule) in variants.items():
        run([tool("zshard-opt"), w("step.mlir"), "--mlir-print-debuginfo",
             f"--zshard-form-units={units}", "--zshard-shard", *schedule,
             "-o", w(f"{name}.mlir")])
        run([tool("zshard-compile"), w(f"{name}.mlir"), "-o", w(f"{name}.zsa")])
        artifacts[name] = w(f"{name}.zsa")
    runner = tool("zshard-run")
    overlap_args = argparse.Namespace(steps=args.steps, warmup=args.warmup, ranks=n)
    prefetch = {}
    for name, artifact in artifacts.items():
        prefetch[name] = overlap.run_once(runner, artifact, overlap_args, args.link_gbps,
                                          args.link_latency_us, work, name)
    off = prefetch["no_prefetch"]
    for name, figures in prefetch.items():
        figures["step_time_vs_no_prefetch"] = round(
            figures["step_ms_median"] / off["step_ms_median"], 4)
        figures["exposed_vs_no_prefetch"] = round(
            figures["exposed_comm_ms_mean"] / off["exposed_comm_ms_mean"], 4)

    memory = []
    for strategy in STRATEGIES:
        units = f"ranks={n} strategy={strategy}"
        if strategy.startswith("hybrid"):
            units += " replicas=2"
        run([tool("zshard-opt"), w("step.mlir"), "--mlir-print-debuginfo",
             f"--zshard-form-units={units}", "--zshard-shard", "-o", w(f"m-{strategy}.mlir")])
        run([tool("zshard-compile"), w(f"m-{strategy}.mlir"), "-o", w(f"m-{strategy}.zsa"),
             "--memory-json", w(f"m-{strategy}.json")])
        with open(w(f"m-{strategy}.json")) as f:
            plan = json.load(f)
        out = run([runner, w(f"m-{strategy}.zsa"), "--ranks", str(n), "--steps", "2", "--quiet"],
                  capture_output=True, text=True).stdout
        measured = json.loads(out.strip().splitlines()[-1])["rank_peak_bytes"]
        worst = max(r["total"] for r in measured)
        memory.append({"strategy": strategy, "predicted_peak": plan["peak_total"],
                       "measured_peak": worst,
                       "predicted_over_measured": round(plan["peak_total"] / worst, 4),
                       "predicted_by_category": plan["peak"],
                       "measured_rank0_by_category": measured[0]})
    print(json.dumps({"bench": "schedule", "model": MODEL, "ranks": n,
                      "link_gbps": args.link_gbps, "prefetch": prefetch, "memory": memory}))


if __name__ == "__main__":
    main()
