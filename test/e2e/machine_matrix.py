#!/usr/bin/env python3
"""The sharded-equivalence matrix on every BLAS kernel and CPU target.

What differs between machines is the rounding of float32 arithmetic: which
OpenBLAS kernel runs the matrix products (OPENBLAS_CORETYPE picks one: the
environment of some machines sets it) and which instructions the step was
compiled to (-mcpu: FMA contraction, vector width). A numerics judge that
holds on one machine and fails on another is a defect, so this test runs the
3- and 4-rank equivalence matrix (every strategy, and the hybrids on 2x2) as
threads, plus the unsharded steps, for artifacts compiled for the host and
for plain x86-64, each under OPENBLAS_CORETYPE unset, Prescott, Sandybridge
and Haswell, and judges every run against one float64 trajectory with the
float32 budget of float32_budget.py (docs/testing.md). It prints the kernel
OpenBLAS really chose for each setting and, per setting, the largest ratio
of error to budget (the margin; the judge allows 1).

usage: machine_matrix.py --bin BUILD/bin --work DIR [--steps 10]
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from zshard_ref import AdamWConfig, GptConfig  # noqa: E402
from zshard_ref import safetensors_io  # noqa: E402

from e2e_common import paths, run  # noqa: E402
from float32_budget import (envelope, hypers_by_rank, judge, read_losses,  # noqa: E402
                            reference_trajectory)

LAYERS, D, HEADS, VOCAB, SEQ, BATCH = 2, 32, 4, 32, 16, 2
MODEL = ["--layers", str(LAYERS), "--d-model", str(D), "--heads", str(HEADS),
         "--vocab", str(VOCAB), "--seq", str(SEQ)]
CORETYPES = ["", "Prescott", "Sandybridge", "Haswell"]
STRATEGIES = ["no_shard", "zero1", "shard_grad_op", "full_shard"]


def openblas_core(coretype):
    """The kernel OpenBLAS picks under OPENBLAS_CORETYPE=coretype ("": unset),
    asked of the library in a fresh process."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    probe = ("import ctypes, ctypes.util\n"
             "name = ctypes.util.find_library('openblas') or 'libopenblas.so.0'\n"
             "lib = ctypes.CDLL(name)\n"
             "lib.openblas_get_corename.restype = ctypes.c_char_p\n"
             "print(lib.openblas_get_corename().decode())\n")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True)
    return out.stdout.strip() or "unknown"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--ranks", default="3,4")
    p.add_argument("--coretypes", default=",".join(CORETYPES),
                   help="OPENBLAS_CORETYPE values, comma-separated (empty: unset)")
    p.add_argument("--mcpu", default="host,x86-64",
                   help="CPUs the steps are compiled for (host: zshard-compile's default)")
    args = p.parse_args()
    tool, w = paths(args)
    steps = args.steps
    coretypes = args.coretypes.split(",")
    cpus = args.mcpu.split(",")

    # The artifacts: per rank count the unsharded step with the global batch
    # and one sharded step per strategy; each compiled for every CPU.
    configs = {}
    for n in (int(r) for r in args.ranks.split(",")):
        runs = [("unsharded", 1, None, 1)]
        runs += [(f"{s}-{n}", n, s, 1) for s in STRATEGIES]
        if n % 2 == 0:
            runs += [(f"{s}-{n}x2", n, s, 2) for s in ("hybrid_shard", "hybrid_shard_zero2")]
        configs[n] = runs
        run([tool("zshard-gen"), "gpt", *MODEL, "--batch", str(n * BATCH),
             "-o", w(f"whole-{n}.mlir")])
        run([tool("zshard-gen"), "gpt", *MODEL, "--batch", str(BATCH), "-o", w("local.mlir")])
        for name, ranks, strategy, replicas in runs[1:]:
            units = f"ranks={ranks} strategy={strategy}"
            if replicas > 1:
                units += f" replicas={replicas}"
            run([tool("zshard-opt"), w("local.mlir"), "--mlir-print-debuginfo",
                 f"--zshard-form-units={units}", "--zshard-shard", "-o",
                 w(f"{name}.mlir")])
        for cpu in cpus:
            mcpu = [] if cpu == "host" else [f"-mcpu={cpu}"]
            for name, _, strategy, _ in runs:
                src = w(f"whole-{n}.mlir") if strategy is None else w(f"{name}.mlir")
                run([tool("zshard-compile"), src, *mcpu, "-o", w(f"{name}-{n}.{cpu}.zsa")])

    rng = np.random.default_rng(7)
    cfg = GptConfig(layers=LAYERS, d_model=D, heads=HEADS, vocab=VOCAB, seq=SEQ, tied=False)
    cores = {ct: openblas_core(ct) for ct in coretypes}
    table, failures, losses_by = [], [], {}
    for n, runs in configs.items():
        shape = (steps, n * BATCH, SEQ)
        batches = {"tokens": rng.integers(0, VOCAB, size=shape, dtype=np.int32),
                   "targets": rng.integers(0, VOCAB, size=shape, dtype=np.int32)}
        safetensors_io.save_file(w(f"batches-{n}.safetensors"), batches)
        run([tool("zshard-run"), w(f"unsharded-{n}.{cpus[0]}.zsa"), "--steps", "0",
             "--save", w("init.safetensors"), "--quiet"], stdout=subprocess.DEVNULL)
        init = safetensors_io.load_file(w("init.safetensors"))
        traj = reference_trajectory(cfg, init, batches, steps, args.lr, AdamWConfig())
        bounds = envelope(traj, init, hypers_by_rank(init, args.lr, AdamWConfig()))
        for cpu in cpus:
            for ct in coretypes:
                env = dict(os.environ)
                env.pop("OPENBLAS_CORETYPE", None)
                if ct:
                    env["OPENBLAS_CORETYPE"] = ct
                row = {"ranks": n, "mcpu": cpu, "OPENBLAS_CORETYPE": ct or "(unset)",
                       "openblas_core": cores[ct], "loss_rel_err": 0.0,
                       "margin": {"param": 0.0, "exp_avg": 0.0, "exp_avg_sq": 0.0}}
                for name, ranks, _, _ in runs:
                    log, out = w(f"{name}-{n}.jsonl"), w(f"{name}-{n}.safetensors")
                    for f in (log, out):
                        if os.path.exists(f):
                            os.remove(f)
                    cmd = [tool("zshard-run"), w(f"{name}-{n}.{cpu}.zsa"), "--steps",
                           str(steps), "--lr", repr(args.lr), "--quiet", "--batch-file",
                           w(f"batches-{n}.safetensors"), "--init-from",
                           w("init.safetensors"), "--log-json", log]
                    cmd += ["--save", out] if ranks == 1 else ["--ranks", str(ranks),
                                                              "--save-full", out]
                    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
                    what = f"{name} (mcpu {cpu}, OPENBLAS_CORETYPE={ct or 'unset'})"
                    f, report = judge(what, read_losses(log), safetensors_io.load_file(out),
                                      traj, bounds)
                    failures += f
                    for kind, m in report["margin"].items():
                        row["margin"][kind] = max(row["margin"][kind], m["error_over_budget"])
                    row["loss_rel_err"] = max(row["loss_rel_err"], report["loss_rel_err"])
                    losses_by[(n, ct, name, cpu)] = read_losses(log)
                table.append(row)
                print(json.dumps(row), flush=True)
    artifacts = sum(len(r) for r in configs.values())
    judged = artifacts * len(cpus) * len(coretypes)
    # The compiled code's rounding does not depend on the CPU it was compiled
    # for (no contraction into FMAs, no reassociation): say whether that held.
    same = all(losses_by[(n, ct, name, cpus[0])] == losses_by[(n, ct, name, cpu)]
               for (n, ct, name, cpu) in losses_by)
    print(f"losses bit-identical across -mcpu {', '.join(cpus)} under each kernel: "
          f"{'yes' if same else 'no'}")
    if failures:
        print("\n".join(failures[:20]))
        sys.exit(f"FAIL: {len(failures)} judgements of {judged} runs failed (first above)")
    worst = {k: max(r["margin"][k] for r in table) for k in table[0]["margin"]}
    print(f"OK: {judged} runs ({artifacts} artifacts x {len(cpus)} CPU targets x "
          f"{len(coretypes)} OpenBLAS kernels: "
          f"{', '.join(sorted(set(cores.values())))}) are each within the float32 budget "
          f"of the float64 reference; largest error/budget: "
          + ", ".join(f"{k} {v:.3g}" for k, v in worst.items())
          + f"; largest loss error {max(r['loss_rel_err'] for r in table):.3g} relative")


if __name__ == "__main__":
    main()
