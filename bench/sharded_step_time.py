#!/usr/bin/env python3
"""Step time and per-rank memory of `gpt` small by sharding strategy and world
size on the local backend (ranks as threads), the global batch held constant.

For each strategy and world size N: zshard-gen with batch B/N per rank,
zshard-form-units + zshard-shard, zshard-compile, zshard-run --ranks N.
Prints one JSON object. On this 2-core machine 4 ranks share 2 cores, so
step times measure the compiled program and the collectives, not scaling.

usage: sharded_step_time.py --bin BUILD/bin [--strategies ...] [--ranks 1,2,4]
"""

import argparse
import json
import os
import subprocess
import tempfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--strategies", default="no_shard,zero1,shard_grad_op,full_shard")
    p.add_argument("--ranks", default="1,2,4")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--global-batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=5)
    args = p.parse_args()
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    results = []
    with tempfile.TemporaryDirectory() as work:
        for strategy in args.strategies.split(","):
            for n in [int(v) for v in args.ranks.split(",")]:
                step = os.path.join(work, f"{strategy}{n}.mlir")
                artifact = os.path.join(work, f"{strategy}{n}.zsa")
                gen = subprocess.run(
                    [tool("zshard-gen"), "gpt", "--layers", str(args.layers),
                     "--d-model", str(args.d_model), "--heads", str(args.heads),
                     "--vocab", str(args.vocab), "--seq", str(args.seq),
                     "--batch", str(args.global_batch // n)],
                    check=True, capture_output=True, text=True).stdout
                subprocess.run([tool("zshard-opt"), "-", "--mlir-print-debuginfo",
                                f"--zshard-form-units=ranks={n} strategy={strategy}",
                                "--zshard-shard", "-o", step],
                               input=gen, text=True, check=True)
                subprocess.run([tool("zshard-compile"), step, "-o", artifact], check=True)
                out = subprocess.run([tool("zshard-run"), artifact, "--ranks", str(n),
                                      "--steps", str(args.steps), "--quiet"],
                                     check=True, capture_output=True, text=True)
                summary = json.loads(out.stdout.strip().splitlines()[-1])
                peaks = summary.get("rank_peak_bytes", [summary["peak_bytes"]])
                results.append({"strategy": strategy, "ranks": n,
                                "mean_step_ms": round(summary["mean_step_ms"], 2),
                                "tokens_per_s": round(args.global_batch * args.seq /
                                                      (summary["mean_step_ms"] / 1000), 1),
                                "rank0_peak_bytes": peaks[0]})
                print(json.dumps(results[-1]), flush=True)
    print(json.dumps({"bench": "sharded_step_time", "model": "gpt", "d_model": args.d_model,
                      "layers": args.layers, "seq": args.seq, "global_batch": args.global_batch,
                      "backend": "local", "results": results}))


if __name__ == "__main__":
    main()
