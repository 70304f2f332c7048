#!/usr/bin/env python3
"""Per-rank memory follows the FSDP / ZeRO table of ARCHITECTURE.md.

For every strategy, a tiny GPT sharded over N ranks runs one step and the
runtime's per-rank peaks by category are compared with the unsharded step's:

| strategy      | parameters | gradients | optimizer state |
|---------------|------------|-----------|-----------------|
| no_shard      | P          | G         | O               |
| zero1         | P          | G / N     | O / N           |
| shard_grad_op | P / N      | G / N     | O / N           |
| full_shard    | P / N      | G / N     | O / N           |

P and O are the unsharded run's parameter and optimizer-state bytes (the
updates are written in place, so the runtime holds each once: the table's
P*b and, for this f32 step's two moments, 8*P), G the bytes of one set of
f32 gradients (P); "/ N" is up to
the padding of each unit to a multiple of N. "gradients" are the reduced
gradients the optimizer reads (the buffers the collectives deliver); zero1
reduce-scatters them like ZeRO-2, so it holds G / N where the table says P*b.

usage: memory_table.py --bin BUILD/bin --work DIR [--ranks 4]
"""

import argparse
import json
import sys

from e2e_common import paths, run

MODEL = ["gpt", "--layers", "2", "--d-model", "32", "--heads", "4", "--vocab", "32",
         "--seq", "16", "--batch", "2"]




def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--ranks", type=int, default=4)
    args = p.parse_args()
    tool, w = paths(args)
    n = args.ranks

    def peaks(artifact, ranks):
        out = run([tool("zshard-run"), artifact, "--ranks", str(ranks), "--steps", "1",
                   "--quiet"], capture_output=True, text=True).stdout
        summary = json.loads(out.strip().splitlines()[-1])
        return summary.get("rank_peak_bytes", [summary["peak_bytes"]])

    run([tool("zshard-gen"), *MODEL, "-o", w("step.mlir")])
    run([tool("zshard-compile"), w("step.mlir"), "-o", w("whole.zsa")])
    base = peaks(w("whole.zsa"), 1)[0]
    P, O = base["parameters"], base["optimizer_state"]
    G = P

    failures, table = [], []
    for strategy in ("no_shard", "zero1", "shard_grad_op", "full_shard"):
        run([tool("zshard-opt"), w("step.mlir"), "--mlir-print-debuginfo",
             f"--zshard-form-units=ranks={n} strategy={strategy}", "--zshard-shard",
             "-o", w(f"{strategy}.mlir")])
        run([tool("zshard-compile"), w(f"{strategy}.mlir"), "-o", w(f"{strategy}.zsa")])
        with open(w(f"{strategy}.zsa/manifest.json")) as f:
            units = json.load(f)["units"]
        # Padding: every unit rounds up to a multiple of N elements of 4 bytes.
        pad = sum(4 * (u["padded"] - sum(_numel(m["shape"]) for m in u["members"]))
                  for u in units)
        sharded_params = strategy in ("shard_grad_op", "full_shard")
        expect = {"parameters": P / n if sharded_params else P,
                  "optimizer_state": O if strategy == "no_shard" else O / n}
        slack = {"parameters": 2 * pad / n, "optimizer_state": 4 * pad / n}
        # The gradients that reach the optimizer: no_shard all-reduces whole
        # unit buffers; every other strategy reduce-scatters them (zero1
        # too, which is why its gradients are G / N rather than the table's
        # P*b: the whole gradient of a unit lives only until its
        # reduce-scatter, as an activation-like temporary).
        if strategy == "no_shard":
            expect["gradients"], slack["gradients"] = G, pad
        else:
            expect["gradients"], slack["gradients"] = G / n, pad / n
        for r, rank in enumerate(peaks(w(f"{strategy}.zsa"), n)):
            row = {"strategy": strategy, "rank": r}
            for cat, want in expect.items():
                got = rank[cat]
                row[cat] = got
                if abs(got - want) > slack[cat] + 1e-9:
                    failures.append(f"{strategy} rank {r}: {cat} {got} bytes, expected "
                                    f"{want:.0f} (+-{slack[cat]:.0f} of padding)")
            table.append(row)
    print(json.dumps({"ranks": n, "unsharded": {"parameters": P, "optimizer_state": O},
                      "per_rank": table}))
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print(f"OK: per-rank parameters, gradients and optimizer state follow the table for "
          f"4 strategies on {n} ranks")


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


if __name__ == "__main__":
    main()
