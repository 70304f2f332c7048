#!/usr/bin/env python3
"""A model with persistent buffers the forward reads trains in zshard as in
torch's eager loop, and its buffers come back unchanged.

The model is Hugging Face-like (an embedding, decoder layers of class
`ScaledDecoderLayer` each with an RMS norm whose gain is a registered
persistent buffer `norm.scale` and a persistent causal mixing matrix `mix`
read by its token mixing, a SiLU MLP, an untied head, the shifted
cross-entropy of `labels=`). export_step makes each persistent buffer a
`buffer` argument (docs/contract.md); zshard-compile shards it full_shard over
--ranks rank threads with one unit per layer (`--wrap
transformer=ScaledDecoderLayer`), which leaves the buffers replicated, and
zshard-run trains --steps steps from the exported weights. Checked:

- the manifest holds every buffer as a `buffer` argument, persistent, whole
  (not sharded), and no result updates it;
- the memory plan (--memory-json) holds the buffers' bytes in the `buffers`
  category, zshard-run measures the same on every rank, and the planned
  peak is within 10% of the measured one (memory_plan.py's bound);
- every loss equals torch eager's float32 training on the same global
  batches to 1e-4 relative (hf_models.py's bound);
- the buffers of the consolidated checkpoint (--save-full) equal the model's
  bit for bit (never updated);
- the --save-torch file loads with `load_state_dict(..., strict=True)`;
- a run of half the steps saved as rank files (--save) and resumed (--resume)
  gives the uninterrupted run's losses for the other half, bit for bit.

usage: buffer_model.py --work DIR [--bin BUILD/bin] [--ranks 4] [--steps 10]
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import torch  # noqa: E402

try:
    import safetensors.torch  # noqa: E402
except ImportError:
    print("SKIP: safetensors is not installed in the torch venv (run scripts/setup-torch.sh)")
    sys.exit(77)

REL = 1e-4
SEQ, VOCAB, HIDDEN, LAYERS, ROWS = 12, 97, 32, 2, 2  # ROWS per rank


class ScaledRMSNorm(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        # A persistent gain the state_dict holds (not trained).
        self.register_buffer("scale", torch.linspace(0.5, 1.5, d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.scale


class ScaledDecoderLayer(torch.nn.Module):
    def __init__(self, d, seq):
        super().__init__()
        self.norm = ScaledRMSNorm(d)
        self.mixer = torch.nn.Linear(d, d)
        self.up = torch.nn.Linear(d, 2 * d)
        self.down = torch.nn.Linear(2 * d, d)
        # A persistent causal averaging matrix (row t averages tokens <= t).
        mix = torch.tril(torch.ones(seq, seq))
        self.register_buffer("mix", mix / mix.sum(-1, keepdim=True))

    def forward(self, h):
        x = self.norm(h)
        h = h + self.mixer(torch.matmul(self.mix, x))
        return h + self.down(torch.nn.functional.silu(self.up(x)))


class ScaledForCausalLM(torch.nn.Module):
    def __init__(self, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.embed = torch.nn.Embedding(VOCAB, HIDDEN)
        self.layers = torch.nn.ModuleList(ScaledDecoderLayer(HIDDEN, SEQ) for _ in range(LAYERS))
        self.norm = ScaledRMSNorm(HIDDEN)
        self.lm_head = torch.nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids, labels):
        h = self.embed(input_ids)
        for layer in self.layers:
            h = layer(h)
        logits = self.lm_head(self.norm(h))
        # Hugging Face's causal LM loss: predict token t+1 from t.
        shift = logits[:, :-1, :].reshape(-1, VOCAB)
        return torch.nn.functional.cross_entropy(shift, labels[:, 1:].reshape(-1))


def batches(steps, rows):
    g = torch.Generator().manual_seed(11)
    ids = torch.randint(0, VOCAB, (steps, rows, SEQ), generator=g)
    return ids, (ids * 5 + 3) % VOCAB


def check_buffer_memory(w, n, buffer_bytes):
    """Checks that the memory plan w("plan.json") of w("step.zsa") holds
    `buffer_bytes` of buffers in their own category, that zshard-run on `n`
    ranks measures the same on every rank, and that the planned peak is within
    10% of the measured one (memory_plan.py's bound). Returns the plan, the
    worst rank's measured peaks and the peak's relative error."""
    with open(w("plan.json")) as f:
        plan = json.load(f)
    out = subprocess.run([common.tool("zshard-run"), w("step.zsa"), "--ranks", str(n),
                          "--steps", "2", "--quiet", "--batch-file", w("batches.safetensors")],
                         check=True, capture_output=True, text=True).stdout
    measured = json.loads(out.strip().splitlines()[-1])["rank_peak_bytes"]
    worst = max(measured, key=lambda r: r["total"])
    plan_err = abs(plan["peak_total"] - worst["total"]) / worst["total"]
    if plan["held"]["buffers"] != buffer_bytes or plan["peak"]["buffers"] != buffer_bytes:
        sys.exit(f"FAIL: the plan holds {plan['held']['buffers']} bytes of buffers, the model "
                 f"{buffer_bytes}")
    if any(r["buffers"] != buffer_bytes for r in measured):
        sys.exit(f"FAIL: measured buffers {[r['buffers'] for r in measured]}, want "
                 f"{buffer_bytes} on every rank")
    if plan_err > 0.10:
        sys.exit(f"FAIL: predicted peak {plan['peak_total']} bytes, measured {worst['total']} "
                 f"({plan_err:.1%} off)")
    return plan, worst, plan_err


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    p.add_argument("--bin", default=None)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--steps", type=int, default=10)
    args = p.parse_args()
    if args.bin:
        os.environ["ZSHARD_BIN"] = args.bin
    torch.set_num_threads(1)
    from zshard_export import export_step
    os.makedirs(args.work, exist_ok=True)

    def w(name):
        return os.path.join(args.work, name)
    n, k = args.ranks, args.steps
    half = k // 2
    model = ScaledForCausalLM(0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    ids, labels = batches(k, n * ROWS)
    # The step takes one rank's rows; zshard-run gives each rank its slice.
    export_step(model, opt, {"input_ids": ids[0][:ROWS], "labels": labels[0][:ROWS]}
                ).write(w("step.mlir"), w("init.safetensors"), w("step.json"))
    common.run([common.tool("zshard-compile"), w("step.mlir"), "-O1", "--strategy",
                "full_shard", "--ranks", str(n), "--wrap", "transformer=ScaledDecoderLayer",
                "--memory-json", w("plan.json"), "-o", w("step.zsa")])
    common.save_batches(w("batches.safetensors"), {"input_ids": ids, "labels": labels})
    buffers = dict(model.named_buffers())

    # The manifest: every buffer whole, persistent, never a result.
    with open(os.path.join(w("step.zsa"), "manifest.json")) as f:
        manifest = json.load(f)
    got = {a["name"]: a for a in manifest["arguments"] if a["role"] == "buffer"}
    if set(got) != set(buffers):
        sys.exit(f"FAIL: buffer arguments {sorted(got)}, the model's buffers {sorted(buffers)}")
    for name, a in got.items():
        if a["shape"] != list(buffers[name].shape) or a.get("persistent") is not True:
            sys.exit(f"FAIL: buffer argument {a} is not the whole persistent buffer "
                     f"{list(buffers[name].shape)}")
    updated = [r.get("name") for r in manifest["results"] if r.get("name") in buffers]
    if updated:
        sys.exit(f"FAIL: results update buffers {updated}")

    buffer_bytes = sum(4 * b.numel() for b in buffers.values())
    plan, worst, plan_err = check_buffer_memory(w, n, buffer_bytes)

    def zshard(log, *extra, check=True):
        cmd = [common.tool("zshard-run"), w("step.zsa"), "--ranks", str(n), "--quiet",
               "--batch-file", w("batches.safetensors"), "--log-json", w(log)]
        cmd += [str(a) for a in extra]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=check)
        return common.losses(w(log))

    got_losses = zshard("train.jsonl", "--steps", k, "--init-from", w("init.safetensors"),
                        "--save-full", w("full.safetensors"), "--save-torch",
                        w("torch.safetensors"))
    eager = ScaledForCausalLM(0)
    want = common.eager_losses(eager, torch.optim.AdamW(eager.parameters(), lr=3e-3),
                               {"input_ids": ids, "labels": labels}, k)
    rels = [abs(a - b) / abs(b) for a, b in zip(got_losses, want)]

    full = safetensors.torch.load_file(w("full.safetensors"))
    changed = [b for b in buffers if not torch.equal(full[b], buffers[b])]
    fresh = ScaledForCausalLM(1)
    sd = safetensors.torch.load_file(w("torch.safetensors"))
    fresh.load_state_dict(sd, strict=True)
    torch_changed = [b for b in buffers if not torch.equal(sd[b], buffers[b])]

    zshard("half.jsonl", "--steps", half, "--init-from", w("init.safetensors"), "--save",
           w("half.safetensors"))
    resumed = zshard("resumed.jsonl", "--steps", k - half, "--resume", w("half.safetensors"))
    print(json.dumps({"zshard": got_losses, "torch": want, "max_rel": max(rels),
                      "resumed": resumed, "buffers": sorted(buffers),
                      "buffer_bytes": buffer_bytes, "predicted_peak": plan["peak_total"],
                      "measured_peak": worst["total"]}))
    if len(got_losses) != k or max(rels) > REL:
        sys.exit(f"FAIL: losses differ from torch eager by up to {max(rels):.2e} (> {REL})")
    if not got_losses[-1] < got_losses[0]:
        sys.exit("FAIL: the loss does not fall")
    if changed or torch_changed:
        sys.exit(f"FAIL: buffers changed by training: {changed or torch_changed}")
    if resumed != got_losses[half:]:
        sys.exit(f"FAIL: resumed losses {resumed} differ from the run's {got_losses[half:]}")
    print(f"OK: {len(buffers)} persistent buffers ({buffer_bytes} bytes per rank, planned "
          f"and measured), full_shard over {n} ranks, {k} steps: losses within "
          f"{max(rels):.1e} of torch eager; buffers unchanged; strict torch load; resume at "
          f"step {half + 1} bit for bit; planned peak {plan_err:.1%} off the measured")


if __name__ == "__main__":
    main()
