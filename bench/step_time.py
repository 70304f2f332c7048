#!/usr/bin/env python3
"""Step time and tokens/s of a compiled GPT step on CPU, and the fraction of the
step spent in the runtime's matmul (BLAS sgemm).

Default config is `gpt` small: d 256, 4 layers, 4 heads, seq 128, batch 8,
vocab 256, f32, one BLAS thread. Prints one JSON object.

usage: step_time.py --bin BUILD/bin [--steps 20] [--warmup 3] [--threads 1]
"""

import argparse
import json
import os
import subprocess
import tempfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtype", default="f32", choices=["f32", "bf16"],
                   help="zshard-gen's --dtype (bf16: bf16 parameters and activations)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        step = os.path.join(work, "gpt.mlir")
        artifact = os.path.join(work, "gpt.zsa")
        subprocess.run([os.path.join(args.bin, "zshard-gen"), "gpt", "--layers", str(args.layers),
                        "--d-model", str(args.d_model), "--heads", str(args.heads),
                        "--vocab", str(args.vocab), "--seq", str(args.seq),
                        "--batch", str(args.batch), "--dtype", args.dtype, "-o", step],
                       check=True)
        subprocess.run([os.path.join(args.bin, "zshard-compile"), step, "-o", artifact],
                       check=True)
        log = os.path.join(work, "log.jsonl")
        out = subprocess.run([os.path.join(args.bin, "zshard-run"), artifact,
                              "--steps", str(args.steps + args.warmup), "--threads",
                              str(args.threads), "--log-json", log, "--quiet"],
                             check=True, capture_output=True, text=True)
        summary = json.loads(out.stdout.strip().splitlines()[-1])
        with open(log) as f:
            ms = [json.loads(line)["ms"] for line in f if line.strip()][args.warmup:]
    ms.sort()
    median = ms[len(ms) // 2]
    tokens = args.batch * args.seq
    print(json.dumps({
        "bench": "step_time", "model": "gpt", "dtype": args.dtype, "d_model": args.d_model,
        "layers": args.layers,
        "heads": args.heads, "vocab": args.vocab, "seq": args.seq, "batch": args.batch,
        "blas_threads": args.threads, "steps_timed": len(ms),
        "step_ms_median": round(median, 3), "step_ms_min": round(ms[0], 3),
        "tokens_per_s": round(tokens / (median / 1000.0), 1),
        "sgemm_fraction": round(summary["sgemm_fraction"], 4),
        "sgemm_gflops": round(summary.get("sgemm_gflops", 0.0), 2),
        "peak_bytes": summary["peak_bytes"]}, indent=1))


if __name__ == "__main__":
    main()
