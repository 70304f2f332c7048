#!/usr/bin/python3
"""Time zshard-gen on full-size, shapes-only Llama and GPT steps; print JSON.

For each configuration this measures, best of --repeat runs:

  * gen_s      -- `zshard-gen MODEL --preset ... --layers L -o FILE` wall time
                  (MODEL `llama`: the Llama architecture at its published
                  shapes; `gpt`: GPT-2 blocks at Llama-2 sizes)
                  build, verify and print the module;
  * parse_s    -- `zshard-opt FILE -o /dev/null` wall time (parse + verify);
  * bytes      -- size of the written IR;
  * ops        -- every operation, nested ones included, from
                  `zshard-opt --print-op-stats`, and the top-level counts of
                  the structured ops (matmul, batch_matmul, generic).

Usage: /usr/bin/python3 bench/gen_time.py [--bin DIR] [--repeat N]
DIR holds zshard-gen and zshard-opt (default: build/bin, else build-gen/bin).
This is a benchmark, never a test: it asserts nothing about the timings.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (model, preset, layers): llama2-7b shapes at growing depth, then the 70b
# preset, for the Llama architecture and for the GPT-2-block presets.
CONFIGS = [(model, preset, layers) for model in ("llama", "gpt")
           for preset, layers in [("llama2-7b", 2), ("llama2-7b", 8), ("llama2-7b", 32),
                                  ("llama2-7b", 80), ("llama2-70b", 80)]]


def find_bin(explicit):
    candidates = [explicit] if explicit else [
        os.path.join(ROOT, "build", "bin"), os.path.join(ROOT, "build-gen", "bin")]
    for d in candidates:
        if d and all(os.access(os.path.join(d, t), os.X_OK)
                     for t in ("zshard-gen", "zshard-opt")):
            return d
    sys.exit("gen_time.py: no directory with zshard-gen and zshard-opt among "
             + ", ".join(c for c in candidates if c) + " (use --bin)")


def timed(cmd, repeat):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if r.returncode != 0:
            sys.exit(f"gen_time.py: {' '.join(cmd)} failed:\n{r.stderr}")
        best = elapsed if best is None else min(best, elapsed)
    return best, r


def op_stats(opt, path):
    r = subprocess.run([opt, path, "--print-op-stats", "-o", os.devnull],
                       capture_output=True, text=True, check=True)
    stats = {}
    for line in r.stderr.splitlines():
        m = re.match(r"\s*([\w.]+)\s*,\s*(\d+)\s*$", line)
        if m:
            stats[m.group(1)] = int(m.group(2))
    return stats


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", help="directory with zshard-gen and zshard-opt")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bindir = find_bin(args.bin)
    gen = os.path.join(bindir, "zshard-gen")
    opt = os.path.join(bindir, "zshard-opt")

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for model, preset, layers in CONFIGS:
            path = os.path.join(tmp, f"{model}-{preset}-{layers}.mlir")
            gen_s, _ = timed([gen, model, "--preset", preset, "--layers",
                              str(layers), "-o", path], args.repeat)
            parse_s, _ = timed([opt, path, "-o", os.devnull], args.repeat)
            stats = op_stats(opt, path)
            results.append({
                "model": model,
                "preset": preset,
                "layers": layers,
                "gen_s": round(gen_s, 4),
                "parse_verify_s": round(parse_s, 4),
                "bytes": os.path.getsize(path),
                "ops_total": sum(stats.values()),
                "linalg.matmul": stats.get("linalg.matmul", 0),
                "linalg.batch_matmul": stats.get("linalg.batch_matmul", 0),
                "linalg.generic": stats.get("linalg.generic", 0),
            })
    json.dump({"benchmark": "zshard-gen llama and gpt shapes-only", "bin": bindir,
               "repeat": args.repeat, "results": results}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
