#!/usr/bin/env python3
"""bench/peer: zshard against PyTorch's own data parallelism, same model, same
machine, same thread settings (one BLAS / intra-op thread per rank).

The model is the nanoGPT-style GPT of python/zshard_export/examples (tied
embeddings). zshard runs the step exported by zshard-export (the same initial
weights, the same batches) full_shard and no_shard over --ranks ranks, on the
local backend (ranks as threads of one process) and on MPI (one process per
rank); PyTorch runs DDP and FSDP (fully_shard per block + root) with gloo,
one process per rank. Prints one JSON object: per run the median and mean
step time (after --warmup steps), peak RSS per rank (MPI and torch: each
process's; local: the one process's, and the runtime's own per-rank
accounting), the final loss (all runs start from the same weights and see
the same batches, so the losses agree), and the ratios zshard / torch.

usage: peer_bench.py [--work DIR] [--bin BUILD/bin] [--ranks 4] [--steps 20] [--warmup 3]
                     [--layers 4 --d-model 128 --heads 4 --vocab 256 --seq 64 --batch 4]
                     [--skip mpi,ddp,...] [-o result.json]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "export"))


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(cmd, **kw):
    log("+", " ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def summarize(step_ms, warmup):
    timed = step_ms[warmup:] or step_ms
    return {"step_ms_median": statistics.median(timed), "step_ms_mean": statistics.fmean(timed),
            "steps_timed": len(timed)}


def emit(report, output):
    """Prints the JSON report, and writes it to `output` when given."""
    text = json.dumps(report, indent=1)
    if output:
        with open(output, "w") as f:
            f.write(text + "\n")
    print(text)


def add_run_args(p, work, steps, warmup, d_model, vocab, seq, batch):
    """The options bench/peer's scripts share: where, how long, the model."""
    p.add_argument("--work", default=os.path.join(ROOT, "build", work))
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--warmup", type=int, default=warmup)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=d_model)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=vocab)
    p.add_argument("--seq", type=int, default=seq)
    p.add_argument("--batch", type=int, default=batch, help="rows per rank")
    p.add_argument("--lr", type=float, default=1e-3)


def main():
    p = argparse.ArgumentParser()
    add_run_args(p, "bench-peer", steps=20, warmup=3, d_model=128, vocab=256, seq=64, batch=4)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--mpiexec", default="mpiexec --allow-run-as-root --oversubscribe --bind-to none")
    p.add_argument("--skip", default="", help="comma-separated: local, mpi, ddp, fsdp")
    p.add_argument("-o", "--output", default=None)
    args = p.parse_args()
    os.environ["ZSHARD_BIN"] = args.bin
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"
    skip = set(filter(None, args.skip.split(",")))

    import torch
    torch.set_num_threads(1)
    import common
    from zshard_export import export_step
    from zshard_export.examples import nanogpt

    os.makedirs(args.work, exist_ok=True)
    w = lambda name: os.path.join(args.work, name)  # noqa: E731
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    n = args.ranks
    model_kw = dict(layers=args.layers, heads=args.heads, d_model=args.d_model,
                    vocab=args.vocab, seq=args.seq, batch=args.batch, lr=args.lr)

    t0 = time.perf_counter()
    model, opt, batch, loss_fn = nanogpt.make(**model_kw)
    result = export_step(model, opt, batch, loss_fn)
    result.write(w("step.mlir"), w("init.safetensors"), w("step.json"))
    export_s = time.perf_counter() - t0
    idx, targets = common.random_batches(args.steps, n * args.batch, args.seq, args.vocab)
    common.save_batches(w("batches.safetensors"), {"idx": idx, "targets": targets})

    compile_s = {}
    for strategy in ("full_shard", "no_shard"):
        t0 = time.perf_counter()
        common.shard(w("step.mlir"), w(f"{strategy}.mlir"), n, strategy)
        run([tool("zshard-compile"), w(f"{strategy}.mlir"), "-o", w(f"{strategy}.zsa")],
            stdout=subprocess.DEVNULL)
        compile_s[strategy] = time.perf_counter() - t0

    runs = {}
    rss_py = os.path.join(HERE, "rss.py")
    for strategy in ("full_shard", "no_shard"):
        for backend in ("local", "mpi"):
            if backend in skip:
                continue
            name = f"zshard-{backend}-{strategy}"
            rss_dir = w(f"rss-{name}")
            shutil.rmtree(rss_dir, ignore_errors=True)
            os.makedirs(rss_dir)
            cmd = [tool("zshard-run"), w(f"{strategy}.zsa"), "--ranks", str(n),
                   "--steps", str(args.steps), "--lr", repr(result.meta["lr"]), "--quiet",
                   "--threads", "1", "--batch-file", w("batches.safetensors"),
                   "--init-from", w("init.safetensors"), "--log-json", w(f"{name}.jsonl")]
            if backend == "mpi":
                cmd = args.mpiexec.split() + ["-n", str(n), sys.executable, rss_py, rss_dir] + \
                    cmd + ["--backend", "mpi"]
            else:
                cmd = [sys.executable, rss_py, rss_dir] + cmd
            out = run(cmd, capture_output=True, text=True).stdout
            summary = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
            steps = [json.loads(line) for line in open(w(f"{name}.jsonl")) if line.strip()]
            rss = [json.load(open(os.path.join(rss_dir, f))) for f in sorted(os.listdir(rss_dir))]
            entry = summarize([s["ms"] for s in steps], args.warmup)
            entry["final_loss"] = steps[-1]["loss"]
            if backend == "mpi":
                entry["peak_rss_mb_per_rank"] = [r["max_rss_kb"] / 1024 for r in rss]
            else:
                entry["peak_rss_mb_process"] = rss[0]["max_rss_kb"] / 1024
                entry["peak_rss_mb_per_rank"] = [rss[0]["max_rss_kb"] / 1024 / n] * n
                entry["note"] = ("local backend: the ranks are threads of one process; per-rank "
                                 "RSS is the process's divided by the ranks")
            entry["runtime_rank_peak_mb"] = [r["total"] / 2**20
                                            for r in summary.get("rank_peak_bytes", [])]
            runs[name] = entry

    for mode in ("ddp", "fsdp"):
        if mode in skip:
            continue
        out_json = w(f"torch-{mode}.json")
        if os.path.exists(out_json):
            os.unlink(out_json)
        cmd = [sys.executable, os.path.join(HERE, "torch_peer.py"), "--mode", mode, "--ranks", n,
             "--work", args.work, "--batches", w("batches.safetensors"), "--steps", args.steps,
             "--layers", args.layers, "--heads", args.heads, "--d-model", args.d_model,
             "--vocab", args.vocab, "--seq", args.seq, "--batch", args.batch, "--lr", args.lr,
             "--port", 29511 + (mode == "fsdp")]
        log("+", " ".join(str(c) for c in cmd))
        rc = subprocess.call([str(c) for c in cmd])
        if not os.path.exists(out_json):
            sys.exit(f"peer_bench: torch {mode} failed (exit status {rc})")
        res = json.load(open(out_json))
        entry = summarize(res["step_ms"], args.warmup)
        entry["final_loss"] = res["losses"][-1]
        entry["peak_rss_mb_per_rank"] = [k / 1024 for k in res["max_rss_kb"]]
        entry["baseline_rss_mb_per_rank"] = [k / 1024 for k in res["baseline_rss_kb"]]
        if rc != 0:  # gloo has been seen to abort at teardown, after the results
            entry["exit_status"] = rc
        entry["note"] = ("baseline: the process after importing torch and joining the gloo "
                         "group, before the model exists")
        runs[f"torch-{mode}"] = entry

    ratios = {}
    pairs = [("full_shard", "torch-fsdp"), ("no_shard", "torch-ddp")]
    for strategy, peer in pairs:
        if peer not in runs:
            continue
        for backend in ("local", "mpi"):
            name = f"zshard-{backend}-{strategy}"
            if name not in runs:
                continue
            a, b = runs[name], runs[peer]
            ratios[f"{name} / {peer}"] = {
                "step_time": a["step_ms_median"] / b["step_ms_median"],
                "peak_rss_per_rank": max(a["peak_rss_mb_per_rank"]) / max(b["peak_rss_mb_per_rank"]),
                # torch's growth above its own import footprint: what training adds
                "peak_rss_per_rank_vs_torch_growth": max(a["peak_rss_mb_per_rank"]) / max(
                    max(x - y for x, y in zip(b["peak_rss_mb_per_rank"],
                                              b["baseline_rss_mb_per_rank"])), 1e-9),
            }
    report = {
        "bench": "peer",
        "model": {**model_kw, "params": result.meta["param_count"], "tied_embeddings": True,
                  "global_batch": n * args.batch},
        "ranks": n, "steps": args.steps, "warmup": args.warmup,
        "threads_per_rank": 1, "cores": os.cpu_count(), "torch": torch.__version__,
        "export_s": export_s, "compile_s": compile_s,
        "runs": runs, "ratios": ratios,
        "note": "ratios below 1 favour zshard (time, memory)",
    }
    emit(report, args.output)


if __name__ == "__main__":
    main()
