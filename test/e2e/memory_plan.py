#!/usr/bin/env python3
"""The static memory plan predicts the runtime's measured per-rank peak.

For each strategy, a GPT step is sharded over N ranks and compiled with
`zshard-compile --memory-json`; `zshard-run` then runs two steps and reports
each rank's measured peaks by category. The predicted peak of the total must
be within --tolerance (10%) of the largest measured rank total, and so must
each of parameters, gradients and optimizer state (the categories sharding
divides) and buffers (none in a GPT step; test/export/buffer_model.py checks
a step with them); activations, communication and other are printed for reference
(the plan bounds each rank's slice of a shard from above). With --offload
the optimizer state goes to the host pool (zshard-offload): it must be
measured there (host_offload), not in optimizer_state nor in the total.

usage: memory_plan.py --bin BUILD/bin --work DIR [--ranks 4] [--size tiny|small]
                      [--offload]
"""

import argparse
import json
import sys

from e2e_common import paths, run

SIZES = {
    "tiny": ["--layers", "2", "--d-model", "32", "--heads", "4", "--vocab", "64",
             "--seq", "16", "--batch", "2"],
    "small": ["--layers", "4", "--d-model", "256", "--heads", "4", "--vocab", "512",
              "--seq", "128", "--batch", "2"],
}
STRATEGIES = ["no_shard", "zero1", "shard_grad_op", "full_shard", "hybrid_shard",
              "hybrid_shard_zero2"]
CHECKED = ("parameters", "gradients", "optimizer_state", "buffers")




def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--size", choices=sorted(SIZES), default="tiny")
    p.add_argument("--tolerance", type=float, default=0.10)
    p.add_argument("--strategies", default=",".join(STRATEGIES))
    p.add_argument("--prefetch", default=None,
                   help="also --zshard-async --zshard-prefetch=<these options>")
    p.add_argument("--offload", action="store_true",
                   help="also --zshard-offload (optimizer state in the host pool)")
    args = p.parse_args()
    tool, w = paths(args)
    n = args.ranks

    run([tool("zshard-gen"), "gpt", *SIZES[args.size], "-o", w("step.mlir")])
    schedule = []
    if args.prefetch is not None:
        schedule = ["--zshard-async", f"--zshard-prefetch={args.prefetch}"]
    if args.offload:
        schedule.append("--zshard-offload")
    checked = CHECKED + (("host_offload",) if args.offload else ())
    failures, rows = [], []
    for strategy in args.strategies.split(","):
        units = f"ranks={n} strategy={strategy}"
        if strategy.startswith("hybrid"):
            units += " replicas=2"
        run([tool("zshard-opt"), w("step.mlir"), "--mlir-print-debuginfo",
             f"--zshard-form-units={units}", "--zshard-shard", *schedule,
             "-o", w(f"{strategy}.mlir")])
        run([tool("zshard-compile"), w(f"{strategy}.mlir"), "-o", w(f"{strategy}.zsa"),
             "--memory-json", w(f"{strategy}.plan.json")])
        with open(w(f"{strategy}.plan.json")) as f:
            plan = json.load(f)
        out = run([tool("zshard-run"), w(f"{strategy}.zsa"), "--ranks", str(n), "--steps", "2",
                   "--quiet"], capture_output=True, text=True).stdout
        measured = json.loads(out.strip().splitlines()[-1])["rank_peak_bytes"]
        worst = max(measured, key=lambda r: r["total"])
        row = {"strategy": strategy, "predicted_total": plan["peak_total"],
               "measured_total": worst["total"],
               "predicted": plan["peak"], "measured_max_rank": worst}
        err = abs(plan["peak_total"] - worst["total"]) / worst["total"]
        row["total_rel_err"] = err
        if err > args.tolerance:
            failures.append(f"{strategy}: predicted peak {plan['peak_total']} bytes, measured "
                            f"{worst['total']} ({err:.1%} off)")
        if args.offload and (plan["peak"]["optimizer_state"] or
                             max(r["optimizer_state"] for r in measured)):
            failures.append(f"{strategy}: optimizer state left in device memory")
        for cat in checked:
            want = max(r[cat] for r in measured)
            got = plan["peak"][cat]
            if abs(got - want) > args.tolerance * max(want, 1):
                failures.append(f"{strategy}: {cat} predicted {got} bytes, measured {want}")
        rows.append(row)
    print(json.dumps({"ranks": n, "size": args.size, "plans": rows}))
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print("OK: " + ", ".join(f"{r['strategy']} {r['total_rel_err']:.1%}" for r in rows) +
          f" (predicted vs measured peak per rank, tolerance {args.tolerance:.0%})")


if __name__ == "__main__":
    main()
