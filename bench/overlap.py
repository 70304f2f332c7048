#!/usr/bin/env python3
"""Step time and exposed communication of compiled artifacts over an emulated
slower link, side by side. Prints one JSON object.

For each artifact directory (e.g. one compiled with prefetch and one without):
zshard-run on the local backend with --link-gbps G (every collective takes at
least its ring bytes / G; see docs/runtime.md, "Emulated link"), --log-json,
and by default once more without the link as a baseline. From the logged
steps after --warmup:

  step_ms_median        median of the step time (the slowest rank's); also
                        step_ms_mean and step_ms_min
  exposed_comm_ms_mean  mean of the time a rank's thread was blocked in
                        collectives or waits, averaged over ranks
  exposed_fraction      that time over the ranks' step time (0: all
                        communication hidden behind compute, 1: none)

The exposed time includes waiting for slower ranks: with more ranks than
cores it is not zero even for an instant link.

The link run also writes a trace (--trace), from which each kind of
collective gets, per rank and step after the warmup:

  comm_ms               time the collectives of that kind took on the
                        communication lane (start to completion)
  exposed_ms            time the compute thread waited for them
  hidden_fraction       1 - exposed / comm: the part of that communication
                        overlapped with compute

usage: overlap.py [--bin BUILD/bin] ART.zsa [ART2.zsa ...] [--ranks N]
                  [--steps 20] [--warmup 3] [--link-gbps 10]
                  [--link-latency-us 0] [--no-baseline]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def trace_breakdown(path, warmup):
    """Per kind of collective: communication time, waited time, hidden part."""
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    kinds, ranks, steps = {}, set(), set()
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("collective", "wait"):
            continue
        step = e.get("args", {}).get("step", 0)
        if step <= warmup:
            continue
        kind = e["args"].get("kind") or e["name"].split(" ")[0]
        entry = kinds.setdefault(kind, {"comm_ms": 0.0, "exposed_ms": 0.0})
        entry["comm_ms" if e["cat"] == "collective" else "exposed_ms"] += e["dur"] / 1000.0
        ranks.add(e["pid"])
        steps.add(step)
    scale = max(len(ranks), 1) * max(len(steps), 1)
    for entry in kinds.values():
        entry["comm_ms"] = round(entry["comm_ms"] / scale, 4)
        entry["exposed_ms"] = round(entry["exposed_ms"] / scale, 4)
        entry["hidden_fraction"] = (round(1.0 - entry["exposed_ms"] / entry["comm_ms"], 4)
                                    if entry["comm_ms"] > 0 else None)
    return kinds


def run_once(tool, artifact, args, link_gbps, link_latency_us, work, tag):
    log = os.path.join(work, f"{tag}.jsonl")
    trace = os.path.join(work, f"{tag}.trace.json")
    command = [tool, artifact, "--steps", str(args.steps), "--quiet", "--log-json", log]
    if link_gbps > 0:
        command += ["--trace", trace]
    if args.ranks:
        command += ["--ranks", str(args.ranks)]
    if link_gbps > 0:
        command += ["--link-gbps", str(link_gbps)]
    if link_latency_us > 0:
        command += ["--link-latency-us", str(link_latency_us)]
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    with open(log) as f:
        records = [json.loads(line) for line in f if line.strip()]
    kept = records[args.warmup:] or records
    ranks = len(kept[0]["rank_ms"])
    step_ms = [r["ms"] for r in kept]
    rank_ms = sum(sum(r["rank_ms"]) for r in kept)
    exposed_ms = sum(sum(r["rank_exposed_comm_ms"]) for r in kept)
    figures = {
        "link_gbps": link_gbps,
        "link_latency_us": link_latency_us,
        "steps_measured": len(kept),
        "step_ms_median": round(statistics.median(step_ms), 4),
        "step_ms_mean": round(statistics.mean(step_ms), 4),
        "step_ms_min": round(min(step_ms), 4),
        "exposed_comm_ms_mean": round(exposed_ms / (ranks * len(kept)), 4),
        "exposed_fraction": round(exposed_ms / rank_ms, 4) if rank_ms > 0 else 0.0,
        "final_loss": summary.get("final_loss"),
        "ranks": summary.get("ranks"),
    }
    if link_gbps > 0:
        figures["by_kind"] = trace_breakdown(trace, args.warmup)
    return figures


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("artifacts", nargs="+", help="compiled artifact directories (NAME.zsa)")
    p.add_argument("--bin", default=os.path.join(root, "build", "bin"),
                   help="directory holding zshard-run (default: build/bin)")
    p.add_argument("--ranks", type=int, default=0, help="default: the artifact's")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3, help="steps left out of the figures")
    p.add_argument("--link-gbps", type=float, default=10.0)
    p.add_argument("--link-latency-us", type=float, default=0.0)
    p.add_argument("--no-baseline", action="store_true",
                   help="skip the run without the emulated link")
    args = p.parse_args()
    tool = os.path.join(args.bin, "zshard-run")
    if not os.access(tool, os.X_OK):
        sys.exit(f"overlap.py: {tool}: no zshard-run there (--bin)")
    if args.steps <= args.warmup:
        sys.exit("overlap.py: --steps must exceed --warmup")
    results = []
    with tempfile.TemporaryDirectory() as work:
        for i, artifact in enumerate(args.artifacts):
            entry = {"artifact": artifact}
            entry["link"] = run_once(tool, artifact, args, args.link_gbps,
                                     args.link_latency_us, work, f"a{i}-link")
            if not args.no_baseline:
                entry["no_link"] = run_once(tool, artifact, args, 0.0, 0.0, work,
                                            f"a{i}-nolink")
                base, slow = entry["no_link"]["step_ms_median"], entry["link"]["step_ms_median"]
                entry["slowdown"] = round(slow / base, 4) if base > 0 else None
            results.append(entry)
    print(json.dumps({"bench": "overlap", "backend": "local", "steps": args.steps,
                      "warmup": args.warmup, "link_gbps": args.link_gbps,
                      "link_latency_us": args.link_latency_us, "results": results}))


if __name__ == "__main__":
    main()
