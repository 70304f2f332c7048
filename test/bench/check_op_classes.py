#!/usr/bin/env python3
"""Runs bench/op_classes.py on a tiny GPT step and checks its JSON: the keys,
every outlined kernel classified and found in step.so, bytes counted, and
(when perf could profile) the shares summing to one. Timings are not checked.

usage: check_op_classes.py --bench bench/op_classes.py --bin BUILD/bin
"""

import argparse
import json
import subprocess
import sys

CLASS_KEYS = {"kernels", "calls", "bytes_per_step", "simd"}
PROFILED_KEYS = {"ms_per_step", "share", "gbps", "fraction_of_host_bw",
                 "fraction_of_l3_bw"}
SIMD_KEYS = {"fp_instructions", "scalar", "xmm", "ymm", "zmm", "packed_fraction",
             "packed_fraction_time_weighted"}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bench", required=True)
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    out = subprocess.run([sys.executable, args.bench, "--bin", args.bin, "--layers", "1",
                          "--d-model", "32", "--heads", "2", "--vocab", "32", "--seq", "8",
                          "--batch", "2", "--steps", "2", "--stream-mb", "8"],
                         check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    for key in ("bench", "config", "stream", "profile", "classes", "kernels",
                "kernels_outlined", "kernels_missing_in_so"):
        if key not in report:
            fail("no key " + key)
    for key in ("l2_gbps", "l3_gbps", "dram_gbps"):
        if not report["stream"].get(key, 0) > 0:
            fail("stream has no positive " + key)
    if report["kernels_outlined"] < 10 or report["kernels_missing_in_so"]:
        fail("kernels: %d outlined, missing in step.so: %s" %
             (report["kernels_outlined"], report["kernels_missing_in_so"]))
    classes = report["classes"]
    for name in ("matmul", "attention", "layernorm/rmsnorm", "softmax/loss", "gelu/silu",
                 "residual/elementwise", "adamw/optimizer", "embedding/scatter",
                 "fill/copy", "other"):
        if name not in classes or not CLASS_KEYS <= set(classes[name]):
            fail("class %s missing or without %s" % (name, sorted(CLASS_KEYS)))
        if not SIMD_KEYS <= set(classes[name]["simd"]):
            fail("class %s: simd without %s" % (name, sorted(SIMD_KEYS)))
    for kernel in report["kernels"].values():
        if kernel["class"] not in classes:
            fail("kernel of unknown class " + kernel["class"])
    for name in ("matmul", "layernorm/rmsnorm", "adamw/optimizer", "fill/copy", "gelu/silu"):
        if not classes[name]["bytes_per_step"] > 0:
            fail("no bytes counted for " + name)
    if report["profile"] is not None:
        for name, c in classes.items():
            if not PROFILED_KEYS <= set(c):
                fail("class %s without %s" % (name, sorted(PROFILED_KEYS)))
        total = sum(c["share"] for c in classes.values())
        if abs(total - 1.0) > 0.01:
            fail("shares sum to %f" % total)
        if not report["profile"]["samples_in_step"] > 0:
            fail("no samples in the step")
        print("profiled: %d samples" % report["profile"]["samples_in_step"])
    else:
        print("no perf: classes, bytes and SIMD counts only")
    print("PASS")


if __name__ == "__main__":
    main()
