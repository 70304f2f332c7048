#!/usr/bin/env python3
"""Compile time of GPT training steps through the whole pipeline.

For each layer count: zshard-gen -> zshard-compile (verify, lower, LLVM codegen
in process, link), measured side by side in one run. Defaults are GPT-2 small
(d 768, 12 heads, vocab 50257, seq 256, batch 1) at 12 and 48 layers. Each
result has the wall time, the CPU time of zshard-compile (user + system, which
other load on the machine disturbs less than wall time) and the phases
zshard-compile --timing reports; `cpu_ratio` is the CPU time of the deepest
step over that of the shallowest, per layer ratio alongside. --step FILE adds a
step from another frontend (zshard-export). Prints one JSON object.

usage: compile_time.py --bin BUILD/bin [--layers 12,48] [--d-model 768]
                       [--heads 12] [--vocab 50257] [--seq 256] [--batch 1]
                       [-O 3] [--step FILE]...
"""

import argparse
import json
import os
import re
import resource
import subprocess
import tempfile
import time


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def compile_step(args, step, artifact):
    cpu = children_cpu()
    start = time.perf_counter()
    out = subprocess.run([os.path.join(args.bin, "zshard-compile"), step, "-o", artifact,
                          f"-O{args.opt}", "--timing"],
                         check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    cpu = children_cpu() - cpu
    phases = json.loads(re.search(r"^\{\"parse_s\".*\}$", out.stderr, re.M).group(0))
    with open(step) as f:
        ops = sum(1 for line in f if " = " in line or line.strip().startswith("linalg."))
    return {"mlir_lines_with_ops": ops, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            **phases}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--layers", default="12,48")
    p.add_argument("--d-model", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("-O", dest="opt", default="3")
    p.add_argument("--step", action="append", default=[],
                   help="also compile this step (e.g. from zshard-export)")
    args = p.parse_args()
    results = []
    others = []
    with tempfile.TemporaryDirectory() as work:
        for layers in [int(v) for v in args.layers.split(",")]:
            step = os.path.join(work, f"gpt{layers}.mlir")
            subprocess.run([os.path.join(args.bin, "zshard-gen"), "gpt", "--layers", str(layers),
                            "--d-model", str(args.d_model), "--heads", str(args.heads),
                            "--vocab", str(args.vocab), "--seq", str(args.seq),
                            "--batch", str(args.batch), "-o", step], check=True)
            result = compile_step(args, step, os.path.join(work, f"gpt{layers}.zsa"))
            results.append({"layers": layers, **result})
        for i, step in enumerate(args.step):
            result = compile_step(args, step, os.path.join(work, f"step{i}.zsa"))
            others.append({"step": step, **result})
    report = {"bench": "compile_time", "model": "gpt", "d_model": args.d_model,
              "heads": args.heads, "vocab": args.vocab, "seq": args.seq, "batch": args.batch,
              "opt_level": args.opt, "results": results}
    if len(results) > 1:
        first, last = results[0], results[-1]
        report["layer_ratio"] = round(last["layers"] / first["layers"], 3)
        report["cpu_ratio"] = round(last["cpu_s"] / first["cpu_s"], 3)
        report["wall_ratio"] = round(last["wall_s"] / first["wall_s"], 3)
    if others:
        report["steps"] = others
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
