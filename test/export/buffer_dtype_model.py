#!/usr/bin/env python3
"""FSDP's MixedPrecision(buffer_dtype=torch.bfloat16) as zshard-compile
--buffer-dtype bf16: the buffers a step reads are rounded to bf16 for
compute, stored and checkpointed in their own f32, and training matches
torch eager on the same rounded buffers.

The model is buffer_model.py's (decoder layers of class `ScaledDecoderLayer`
with the persistent buffers `norm.scale` and `mix`, the final norm's
`norm.scale`) plus a persistent f32 logit bias at the model's top level
(`logit_bias`, values about 8, where bf16 keeps 1/16), which FSDP's root
instance owns and zshard's @root unit (module: the model) does. zshard-compile
shards it full_shard over --ranks rank threads, one unit per layer, with
`--buffer-dtype bf16`, and zshard-run trains --steps steps from the exported
weights. Checked:

- every unit of the manifest records "buffer_dtype": "bf16", and every
  buffer argument is still the whole f32 buffer (stored in its own type);
- the memory plan charges the buffers at their stored f32 size, and
  zshard-run measures the same bytes on every rank; the planned peak, the
  rounded copies included, is within 10% of the measured one;
- every loss equals torch eager's float32 training on the same global
  batches, its buffers rounded to bf16 and back (`b.to(torch.bfloat16)
  .float()`: what FSDP computes with when the compute is f32), to 1e-4
  relative; and eager training on the unrounded buffers differs from that by
  more than 5e-4 at some step, so a run that did not round would fail;
- the buffers of the consolidated checkpoint (--save-full) equal the
  model's f32 buffers bit for bit (stored unrounded, never updated).

usage: buffer_dtype_model.py --work DIR [--bin BUILD/bin] [--ranks 4] [--steps 10]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import torch  # noqa: E402

try:
    import safetensors.torch  # noqa: E402
except ImportError:
    print("SKIP: safetensors is not installed in the torch venv (run scripts/setup-torch.sh)")
    sys.exit(77)

from buffer_model import (REL, ROWS, VOCAB, ScaledForCausalLM, batches,  # noqa: E402
                          check_buffer_memory)

# A run that did not round must miss torch's rounded losses by this much.
VISIBLE = 5 * REL


class BiasedForCausalLM(ScaledForCausalLM):
    def __init__(self, seed):
        super().__init__(seed)
        g = torch.Generator().manual_seed(5)
        self.register_buffer("logit_bias", 8 + 2 * torch.randn(VOCAB, generator=g))

    def forward(self, input_ids, labels):
        h = self.embed(input_ids)
        for layer in self.layers:
            h = layer(h)
        logits = self.lm_head(self.norm(h)) + self.logit_bias
        shift = logits[:, :-1, :].reshape(-1, VOCAB)
        return torch.nn.functional.cross_entropy(shift, labels[:, 1:].reshape(-1))


def eager(batch, steps, rounded):
    """torch's float32 training, its buffers rounded to bf16 and back if `rounded`."""
    model = BiasedForCausalLM(0)
    if rounded:
        for module in model.modules():
            for name, b in list(module._buffers.items()):
                module._buffers[name] = b.to(torch.bfloat16).float()
    return common.eager_losses(model, torch.optim.AdamW(model.parameters(), lr=3e-3),
                               batch, steps)


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
    model = BiasedForCausalLM(0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    ids, labels = batches(k, n * ROWS)
    export_step(model, opt, {"input_ids": ids[0][:ROWS], "labels": labels[0][:ROWS]}
                ).write(w("step.mlir"), w("init.safetensors"), w("step.json"))
    common.run([common.tool("zshard-compile"), w("step.mlir"), "-O1", "--strategy",
                "full_shard", "--ranks", str(n), "--wrap", "transformer=ScaledDecoderLayer",
                "--buffer-dtype", "bf16", "--memory-json", w("plan.json"), "-o", w("step.zsa")])
    common.save_batches(w("batches.safetensors"), {"input_ids": ids, "labels": labels})
    buffers = dict(model.named_buffers())

    # The manifest: every unit computes its buffers in bf16; the buffers
    # stay whole f32 arguments.
    with open(os.path.join(w("step.zsa"), "manifest.json")) as f:
        manifest = json.load(f)
    units = {u["name"]: u.get("buffer_dtype") for u in manifest["units"]}
    if len(units) != 3 or set(units.values()) != {"bf16"}:
        sys.exit(f"FAIL: the units' buffer_dtype {units}, want bf16 for root and 2 layers")
    got = {a["name"]: a for a in manifest["arguments"] if a["role"] == "buffer"}
    if set(got) != set(buffers):
        sys.exit(f"FAIL: buffer arguments {sorted(got)}, the model's buffers {sorted(buffers)}")
    for name, a in got.items():
        if a["shape"] != list(buffers[name].shape) or a["dtype"] != "f32":
            sys.exit(f"FAIL: buffer argument {a} is not the whole f32 buffer "
                     f"{list(buffers[name].shape)}")

    # The plan charges the buffers at their stored f32 size, as zshard-run
    # measures them; its peak includes the rounded copies.
    buffer_bytes = sum(4 * b.numel() for b in buffers.values())
    _, _, plan_err = check_buffer_memory(w, n, buffer_bytes)

    log = w("train.jsonl")
    common.run([common.tool("zshard-run"), w("step.zsa"), "--ranks", str(n), "--quiet",
                "--batch-file", w("batches.safetensors"), "--log-json", log, "--steps", k,
                "--init-from", w("init.safetensors"), "--save-full", w("full.safetensors")])
    got_losses = common.losses(log)
    batch = {"input_ids": ids, "labels": labels}
    want = eager(batch, k, rounded=True)
    unrounded = eager(batch, k, rounded=False)
    rels = [abs(a - b) / abs(b) for a, b in zip(got_losses, want)]
    visible = max(abs(a - b) / abs(b) for a, b in zip(unrounded, want))
    full = safetensors.torch.load_file(w("full.safetensors"))
    changed = [b for b in buffers if not torch.equal(full[b], buffers[b])]
    print(json.dumps({"zshard": got_losses, "torch_bf16_buffers": want,
                      "torch_f32_buffers": unrounded, "max_rel": max(rels),
                      "rounding_visible": visible, "buffer_bytes": buffer_bytes}))
    if visible <= VISIBLE:
        sys.exit(f"FAIL: rounding the buffers moves torch's losses by only {visible:.2e} "
                 f"(<= {VISIBLE}); the test could not tell rounded from unrounded")
    if len(got_losses) != k or max(rels) > REL:
        sys.exit(f"FAIL: losses differ from torch eager on bf16-rounded buffers by up to "
                 f"{max(rels):.2e} (> {REL})")
    if changed:
        sys.exit(f"FAIL: checkpointed buffers differ from the model's f32 buffers: {changed}")
    print(f"OK: --buffer-dtype bf16, full_shard over {n} ranks, {k} steps: losses within "
          f"{max(rels):.1e} of torch eager on bf16-rounded buffers (unrounded: "
          f"{visible:.1e} off); {len(buffers)} buffers stored and checkpointed in f32 "
          f"({buffer_bytes} bytes per rank, planned and measured); planned peak "
          f"{plan_err:.1%} off the measured")


if __name__ == "__main__":
    main()
