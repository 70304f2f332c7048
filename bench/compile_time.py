#!/usr/bin/env python3
"""Compile time of GPT training steps through the whole pipeline.

For each layer count: zshard-gen -> zshard-compile (verify, lower, LLVM codegen
in process, link), measured side by side in one run. Prints one JSON object.

usage: compile_time.py --bin BUILD/bin [--layers 2,8,32] [--d-model 64] [-O 3]
"""

import argparse
import json
import os
import re
import subprocess
import tempfile
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--layers", default="2,8,32")
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=128)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("-O", dest="opt", default="3")
    args = p.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as work:
        for layers in [int(v) for v in args.layers.split(",")]:
            step = os.path.join(work, f"gpt{layers}.mlir")
            subprocess.run([os.path.join(args.bin, "zshard-gen"), "gpt", "--layers", str(layers),
                            "--d-model", str(args.d_model), "--heads", str(args.heads),
                            "--vocab", str(args.vocab), "--seq", str(args.seq),
                            "--batch", str(args.batch), "-o", step], check=True)
            start = time.perf_counter()
            out = subprocess.run([os.path.join(args.bin, "zshard-compile"), step,
                                  "-o", os.path.join(work, f"gpt{layers}.zsa"),
                                  f"-O{args.opt}", "--timing"],
                                 check=True, capture_output=True, text=True)
            wall = time.perf_counter() - start
            phases = json.loads(re.search(r"^\{\"parse_s\".*\}$", out.stderr, re.M).group(0))
            with open(step) as f:
                ops = sum(1 for line in f if " = " in line or line.strip().startswith("linalg."))
            results.append({"layers": layers, "mlir_lines_with_ops": ops, "wall_s": round(wall, 3),
                            **phases})
    print(json.dumps({"bench": "compile_time", "model": "gpt", "d_model": args.d_model,
                      "seq": args.seq, "batch": args.batch, "opt_level": args.opt,
                      "results": results}, indent=1))


if __name__ == "__main__":
    main()
