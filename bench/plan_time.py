#!/usr/bin/env python3
"""Whole-pipeline compile time without code generation, at LLaMA-2-70B size.

For each depth of the shapes-only `zshard-gen llama --preset llama2-70b`
(the Llama-2-70B architecture, bf16), measured side
by side in one run (best of --repeat):

  * unsharded_s  -- `zshard-compile --emit=memory-plan` on the unsharded step
                    (verify, bufferize, in-place updates, deallocations, plan);
  * shard_s      -- `zshard-opt` form-units + shard + async + prefetch for
                    full_shard over --ranks, one unit per decoder layer
                    (the sharding passes alone);
  * sharded_s    -- `zshard-compile --emit=memory-plan` of that sharded step;
  * peak_gib     -- its predicted peak per rank.

With --auto, also the 80-layer `zshard-compile --auto` over --ranks ranks of
80 GiB (h100, ib): every candidate sharded, planned and costed.

Prints one JSON object. A benchmark, never a test: it asserts nothing.

usage: plan_time.py --bin BUILD/bin [--layers 8,20,40,80] [--ranks 8] [--auto]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def timed(cmd, repeat):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, out


def peak_of(report):
    for line in report.splitlines():
        if line.startswith("total "):
            return int(line.split()[-1]) / 2**30
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--layers", default="8,20,40,80")
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--auto", action="store_true")
    args = p.parse_args()
    tool = lambda name: os.path.join(args.bin, name)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for layers in [int(x) for x in args.layers.split(",")]:
            step = os.path.join(tmp, f"70b-{layers}.mlir")
            sharded = os.path.join(tmp, f"70b-{layers}-fs.mlir")
            subprocess.run([tool("zshard-gen"), "llama", "--preset", "llama2-70b", "--dtype",
                            "bf16", "--layers", str(layers), "-o", step], check=True)
            unsharded_s, _ = timed([tool("zshard-compile"), step, "--emit=memory-plan"],
                                   args.repeat)
            shard_s, _ = timed([tool("zshard-opt"), step, "--mlir-print-debuginfo",
                                f"--zshard-form-units=pattern=model.layers.<i> ranks={args.ranks} "
                                "strategy=full_shard",
                                "--zshard-shard", "--zshard-async", "--zshard-prefetch",
                                "-o", sharded], args.repeat)
            sharded_s, report = timed([tool("zshard-compile"), sharded, "--emit=memory-plan"],
                                      args.repeat)
            results.append({"layers": layers, "unsharded_s": round(unsharded_s, 3),
                            "shard_s": round(shard_s, 3), "sharded_s": round(sharded_s, 3),
                            "peak_gib": round(peak_of(report), 2)})
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
        auto = None
        if args.auto:
            step = os.path.join(tmp, "70b-80.mlir")
            if not os.path.exists(step):
                subprocess.run([tool("zshard-gen"), "llama", "--preset", "llama2-70b", "--dtype",
                                "bf16", "-o", step], check=True)
            start = time.perf_counter()
            r = subprocess.run([tool("zshard-compile"), step, "--auto", "--ranks",
                                str(args.ranks), "--memory-per-rank", "80GiB", "--device",
                                "h100", "--link", "ib", "--emit=memory-plan"],
                               capture_output=True, text=True)
            chosen = [l.split()[0] for l in r.stdout.splitlines() if "chosen" in l]
            auto = {"ranks": args.ranks, "seconds": round(time.perf_counter() - start, 1),
                    "chosen": chosen[0] if chosen else None}
    json.dump({"benchmark": "plan time, llama2-70b shapes-only", "ranks": args.ranks,
               "results": results, "auto": auto}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
