#!/usr/bin/env python3
"""bench/peer/single_rank.py: the exported nanoGPT step on one rank against
torch eager, side by side in one run: the same model, initial weights and
batches, one BLAS / intra-op thread each.

zshard: the step zshard-export writes (python/zshard_export/examples/nanogpt),
compiled unsharded with zshard-compile and run by zshard-run. torch: the same
model and AdamW trained eagerly in this process. The two sides run --rounds
times, alternated, each round from the initial weights. Prints one JSON
object: each side's median and mean step time over every round's steps after
--warmup, each round's medians and ratio (`per_round`), the final losses
(they agree: same weights, same batches), the ratio zshard / eager (the
median of the rounds' ratios), and with --perf the top entries of a `perf
record` of the first zshard run (share of samples by symbol; the step's own
loops appear under the step's symbols) and the share of each shared object.
On a shared machine the wall-clock ratio moves with the load (alternating
spreads a change over both sides); the CPU-time ratio (zshard's an upper
bound) does not.

usage: single_rank.py [--work DIR] [--bin BUILD/bin] [--steps 10] [--warmup 2] [--rounds 3]
                      [--layers 4 --d-model 256 --heads 4 --vocab 1024 --seq 128 --batch 8]
                      [--perf] [--perf-top 12] [--reuse] [-o result.json]
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import time

# peer_bench puts python/ and test/export on the path, as this bench needs.
from peer_bench import add_run_args, emit, run, summarize


def perf_top(data, top):
    """The `top` largest entries of a perf report by symbol, and the share
    of every shared object (BLAS, the step's own loops in step.so, ...)."""
    def report(sort):
        return subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", sort],
                              check=True, capture_output=True, text=True).stdout.splitlines()
    rows = []
    for line in report("dso,symbol"):
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*?)\s*$", line)
        if m:
            rows.append({"percent": float(m.group(1)), "dso": m.group(2),
                         "symbol": m.group(3).split("  ")[0]})
    dsos = {}
    for line in report("dso"):
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s*$", line)
        if m:
            dsos[m.group(2)] = float(m.group(1))
    return rows[:top], dsos


def main():
    p = argparse.ArgumentParser()
    add_run_args(p, "bench-single-rank", steps=10, warmup=2, d_model=256, vocab=1024, seq=128,
                 batch=8)
    p.add_argument("--rounds", type=int, default=3,
                   help="zshard and eager runs, alternated (the ratio: their rounds' median)")
    p.add_argument("--perf", action="store_true", help="perf record the first zshard run")
    p.add_argument("--perf-top", type=int, default=12)
    p.add_argument("--reuse", action="store_true",
                   help="keep the compiled step of an earlier run in --work")
    p.add_argument("-o", "--output", default=None)
    args = p.parse_args()
    os.environ["ZSHARD_BIN"] = args.bin
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"

    import torch
    torch.set_num_threads(1)
    import common
    from zshard_export import export_step
    from zshard_export.examples import nanogpt

    os.makedirs(args.work, exist_ok=True)
    w = lambda name: os.path.join(args.work, name)  # noqa: E731
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    model_kw = dict(layers=args.layers, heads=args.heads, d_model=args.d_model,
                    vocab=args.vocab, seq=args.seq, batch=args.batch, lr=args.lr)

    t0 = time.perf_counter()
    model, opt, batch, loss_fn = nanogpt.make(**model_kw)
    eager_model, eager_opt = common.deepcopy_with_optimizer(model, opt)
    result = export_step(model, opt, batch, loss_fn)
    result.write(w("step.mlir"), w("init.safetensors"), w("step.json"))
    export_s = time.perf_counter() - t0
    idx, targets = common.random_batches(args.steps, args.batch, args.seq, args.vocab)
    common.save_batches(w("batches.safetensors"), {"idx": idx, "targets": targets})

    t0 = time.perf_counter()
    if not (args.reuse and os.path.exists(w("step.zsa"))):
        run([tool("zshard-compile"), w("step.mlir"), "-o", w("step.zsa")],
            stdout=subprocess.DEVNULL)
    compile_s = time.perf_counter() - t0

    def run_zshard(round_index):
        """One zshard-run of --steps steps: its summary and per-step losses."""
        log = w(f"zshard-{round_index}.jsonl")
        cmd = [tool("zshard-run"), w("step.zsa"), "--steps", str(args.steps),
               "--lr", repr(result.meta["lr"]), "--quiet", "--threads", "1",
               "--batch-file", w("batches.safetensors"), "--init-from",
               w("init.safetensors"), "--log-json", log]
        if args.perf and round_index == 0:
            cmd = ["perf", "record", "-q", "-F", "499", "-o", w("perf.data"), "--"] + cmd
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        run(cmd, capture_output=True, text=True)
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        steps = [json.loads(line) for line in open(log) if line.strip()]
        cpu_ms = 1e3 * (cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime)
        return [s["ms"] for s in steps], cpu_ms, [s["loss"] for s in steps]

    def run_eager():
        """--steps eager steps from the initial weights: times, CPU times, losses."""
        m, o = common.deepcopy_with_optimizer(eager_model, eager_opt)
        times, cpu, losses = [], [], []
        for s in range(args.steps):
            t0, c0 = time.perf_counter(), time.process_time()
            _, loss = m(idx[s], targets[s])
            o.zero_grad(set_to_none=True)
            loss.backward()
            o.step()
            times.append((time.perf_counter() - t0) * 1e3)
            cpu.append((time.process_time() - c0) * 1e3)
            losses.append(float(loss.detach()))
        return times, cpu, losses

    # The two sides alternate, --rounds times, so that a change in the
    # machine's load falls on both: the ratio reported is the median of the
    # rounds' ratios.
    rounds, zshard_ms, zshard_cpu, eager_ms, eager_cpu = [], [], 0.0, [], []
    for r in range(args.rounds):
        z_ms, z_cpu, z_losses = run_zshard(r)
        e_ms, e_cpu, e_losses = run_eager()
        z, e = summarize(z_ms, args.warmup), summarize(e_ms, args.warmup)
        rounds.append({"zshard_step_ms_median": z["step_ms_median"],
                       "eager_step_ms_median": e["step_ms_median"],
                       "ratio": z["step_ms_median"] / e["step_ms_median"]})
        zshard_ms += z_ms[args.warmup:] or z_ms
        eager_ms += e_ms[args.warmup:] or e_ms
        zshard_cpu += z_cpu
        eager_cpu += e_cpu[args.warmup:] or e_cpu
        if r == 0:
            loss_diff = max(abs(a - b) for a, b in zip(z_losses, e_losses))
    zshard = summarize(zshard_ms, 0)
    # CPU time per step (the whole runs over their steps: an upper bound, it
    # includes loading), which contention on a shared machine does not inflate.
    zshard["cpu_ms_per_step_max"] = zshard_cpu / (args.steps * args.rounds)
    zshard["final_loss"] = z_losses[-1]
    if args.perf:
        zshard["note"] = "round 0 timed under perf record (-F 499)"
    eager = summarize(eager_ms, 0)
    eager["cpu_ms_per_step"] = statistics.fmean(eager_cpu)
    eager["final_loss"] = e_losses[-1]

    report = {
        "bench": "single_rank",
        "model": {**model_kw, "params": result.meta["param_count"], "tied_embeddings": True},
        "steps": args.steps, "warmup": args.warmup, "rounds": args.rounds, "threads": 1,
        "torch": torch.__version__,
        "export_s": export_s, "compile_s": compile_s,
        "runs": {"zshard": zshard, "torch-eager": eager},
        "per_round": rounds,
        "ratio_zshard_over_eager": statistics.median(r["ratio"] for r in rounds),
        "cpu_ratio_zshard_over_eager_max": zshard["cpu_ms_per_step_max"] /
        eager["cpu_ms_per_step"],
        "loss_abs_diff": loss_diff,
        "note": "ratio below 1 favours zshard",
    }
    if args.perf:
        report["perf_top"], report["perf_by_dso"] = perf_top(w("perf.data"), args.perf_top)
    emit(report, args.output)


if __name__ == "__main__":
    main()
