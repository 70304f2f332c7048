#!/usr/bin/env python3
"""Activation checkpointing keeps the losses and lowers the activation peak.

A GPT step is compiled without rematerialisation and with each policy of
--zshard-remat; every artifact trains the same steps from the same init on
the same synthetic data. For each policy:

- the losses equal the no-remat run's within --rtol (1e-6 relative; the
  clones compute exactly what the forward computed);
- the activation peak the runtime measures is lower than without remat
  (all policies here checkpoint at least one block);
- the memory plan (zshard-compile --memory-json) predicts that activation
  peak within 10%, so it predicts the drop.

usage: remat.py --bin BUILD/bin --work DIR
"""

import argparse
import json
import sys

from e2e_common import paths, run

MODEL = ["gpt", "--layers", "4", "--d-model", "64", "--heads", "4", "--vocab", "64",
         "--seq", "32", "--batch", "4"]
POLICIES = ["all", "every=2", "selective", "budget=1500000"]




def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--rtol", type=float, default=1e-6)
    args = p.parse_args()
    tool, w = paths(args)

    run([tool("zshard-gen"), *MODEL, "-o", w("step.mlir")])

    def train(policy):
        tag = policy.replace("=", "-")
        run([tool("zshard-opt"), w("step.mlir"), "--mlir-print-debuginfo",
             f"--zshard-remat=policy={policy}", "-o", w(f"{tag}.mlir")])
        run([tool("zshard-compile"), w(f"{tag}.mlir"), "-o", w(f"{tag}.zsa"),
             "--memory-json", w(f"{tag}.plan.json")])
        out = run([tool("zshard-run"), w(f"{tag}.zsa"), "--steps", str(args.steps),
                   "--log-json", w(f"{tag}.jsonl"), "--quiet"],
                  capture_output=True, text=True).stdout
        summary = json.loads(out.strip().splitlines()[-1])
        with open(w(f"{tag}.jsonl")) as f:
            losses = [json.loads(line)["loss"] for line in f if line.strip()]
        with open(w(f"{tag}.plan.json")) as f:
            plan = json.load(f)
        return {"policy": policy, "losses": losses,
                "measured_activations": summary["peak_bytes"]["activations"],
                "predicted_activations": plan["peak"]["activations"],
                "measured_total": summary["peak_bytes"]["total"],
                "predicted_total": plan["peak_total"],
                "step_ms": summary["mean_step_ms"]}

    base = train("none")
    rows, failures = [base], []
    for policy in POLICIES:
        row = train(policy)
        rows.append(row)
        err = max(abs(a - b) / abs(b) for a, b in zip(row["losses"], base["losses"]))
        row["loss_rel_err"] = err
        if len(row["losses"]) != args.steps or err > args.rtol:
            failures.append(f"{policy}: losses differ by {err:.3g} relative")
        if row["measured_activations"] >= base["measured_activations"]:
            failures.append(f"{policy}: activation peak {row['measured_activations']} is "
                            f"not below {base['measured_activations']} without remat")
    for row in rows:
        m, q = row["measured_activations"], row["predicted_activations"]
        if abs(q - m) > 0.10 * m:
            failures.append(f"{row['policy']}: activation peak predicted {q}, measured {m}")
    print(json.dumps({"model": MODEL, "runs": rows}))
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print("OK: " + ", ".join(
        f"{r['policy']} activations {r['measured_activations']} (plan {r['predicted_activations']})"
        for r in rows) + f"; losses equal within {args.rtol:g}")


if __name__ == "__main__":
    main()
