#!/usr/bin/env python3
"""The llama step against Hugging Face's LlamaForCausalLM in torch eager.

Builds a LlamaForCausalLM (attn_implementation "sdpa", no biases, untied
head) of the same shapes as `zshard-gen llama`, loads the zshard_ref initial
parameters into it with load_state_dict(strict=True) (the names and shapes
are the state_dict's) and trains it in float64 with torch.optim.AdamW
(weight decay on tensors of rank >= 2, as docs/models.md), the loss being
cross-entropy of the logits against the targets as the step computes it.

Two checks:
* the NumPy reference (python/zshard_ref/llama.py, float64) gives torch's
  loss and gradients at step 1 to TORCH_REL: HF keeps RMSNorm's statistics
  and the rotary tables in float32 even in a float64 model, so the two agree
  to float32 roundoff, not float64's; any difference in the architecture
  would be orders of magnitude larger;
* the compiled step (zshard-gen -> zshard-compile -> zshard-run), float32,
  is judged against torch's float64 trajectory with the float32 budget of
  float32_budget.py (docs/testing.md).

Run it with test/export/with_torch.py (the torch venv), which exits 77 (SKIP)
without one.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import float32_budget  # noqa: E402
from e2e_common import paths, run  # noqa: E402
from zshard_ref import AdamWConfig, LlamaConfig, init_params, loss_and_grads  # noqa: E402
from zshard_ref import safetensors_io  # noqa: E402
from zshard_ref.adamw import decays  # noqa: E402

#: Reference vs torch at step 1, relative to the loss / each tensor's largest gradient.
TORCH_REL = 1e-5


def hf_model(cfg):
    from transformers import LlamaConfig as HfConfig
    from transformers import LlamaForCausalLM

    hc = HfConfig(vocab_size=cfg.vocab, hidden_size=cfg.d_model,
                  intermediate_size=cfg.ffn_hidden, num_hidden_layers=cfg.layers,
                  num_attention_heads=cfg.heads, num_key_value_heads=cfg.kv_heads,
                  max_position_embeddings=cfg.seq, rms_norm_eps=1e-5,
                  rope_theta=cfg.rope_theta, tie_word_embeddings=False,
                  attention_bias=False, mlp_bias=False, attn_implementation="sdpa")
    return LlamaForCausalLM(hc).double()


def torch_trajectory(cfg, params, batches, steps, lr, adamw):
    model = hf_model(cfg)
    model.load_state_dict({n: torch.from_numpy(np.asarray(v, np.float64))
                           for n, v in params.items()}, strict=True)
    named = dict(model.named_parameters())
    groups = [{"params": [p for n, p in named.items() if decays(params[n])],
               "weight_decay": adamw.weight_decay},
              {"params": [p for n, p in named.items() if not decays(params[n])],
               "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=lr, betas=(adamw.beta1, adamw.beta2), eps=adamw.eps)
    losses, grads = [], []
    for s in range(steps):
        tokens = torch.from_numpy(batches["tokens"][s].astype(np.int64))
        targets = torch.from_numpy(batches["targets"][s].astype(np.int64))
        logits = model(input_ids=tokens).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.vocab),
                                                 targets.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        grads.append({n: p.grad.detach().numpy().copy() for n, p in named.items()})
        opt.step()
        losses.append(float(loss.detach()))
    final = {n: p.detach().numpy().copy() for n, p in named.items()}
    state = {}
    for n, p in named.items():
        state[n + ".exp_avg"] = opt.state[p]["exp_avg"].numpy().copy()
        state[n + ".exp_avg_sq"] = opt.state[p]["exp_avg_sq"].numpy().copy()
    return float32_budget.Trajectory(losses, grads, final, state)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--d-model", type=int, default=36)
    p.add_argument("--heads", type=int, default=6)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--ffn-hidden", type=int, default=40)
    p.add_argument("--vocab", type=int, default=97)
    p.add_argument("--seq", type=int, default=12)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    tool, w = paths(args)
    cfg = LlamaConfig(layers=args.layers, d_model=args.d_model, heads=args.heads,
                      kv_heads=args.kv_heads, ffn_hidden=args.ffn_hidden, vocab=args.vocab,
                      seq=args.seq)
    adamw = AdamWConfig()
    rng = np.random.default_rng(args.seed)
    params = init_params(cfg, seed=args.seed)
    shape = (args.steps, args.batch, args.seq)
    batches = {"tokens": rng.integers(0, cfg.vocab, size=shape, dtype=np.int32),
               "targets": rng.integers(0, cfg.vocab, size=shape, dtype=np.int32)}

    torch.set_num_threads(1)
    traj = torch_trajectory(cfg, params, batches, args.steps, args.lr, adamw)

    # The reference against torch at step 1.
    loss, grads = loss_and_grads(cfg, params, {k: v[0] for k, v in batches.items()},
                                 dtype=np.float64)
    errors = {"loss": abs(float(loss) - traj.losses[0]) / abs(traj.losses[0])}
    for n, g in traj.grads[0].items():
        errors[n] = float(np.abs(grads[n] - g).max() / np.abs(g).max())
    worst = max(errors, key=errors.get)
    print(f"zshard_ref vs torch at step 1: worst {worst} {errors[worst]:.3g} relative")
    if errors[worst] > TORCH_REL:
        sys.exit(f"FAIL: zshard_ref's {worst} is {errors[worst]:.3g} from torch's, "
                 f"budget {TORCH_REL}")

    # The compiled step against torch's float64 trajectory.
    run([tool("zshard-gen"), "llama", "--layers", str(cfg.layers), "--d-model",
         str(cfg.d_model), "--heads", str(cfg.heads), "--kv-heads", str(cfg.kv_heads),
         "--ffn-hidden", str(cfg.ffn_hidden), "--vocab", str(cfg.vocab), "--seq",
         str(cfg.seq), "--batch", str(args.batch), "-o", w("step.mlir")])
    run([tool("zshard-compile"), w("step.mlir"), "-o", w("step.zsa")])
    safetensors_io.save_file(w("init.safetensors"), params)
    safetensors_io.save_file(w("batches.safetensors"), batches)
    run([tool("zshard-run"), w("step.zsa"), "--steps", str(args.steps), "--lr", repr(args.lr),
         "--init-from", w("init.safetensors"), "--batch-file", w("batches.safetensors"),
         "--save", w("out.safetensors"), "--log-json", w("log.jsonl"), "--quiet"])
    hypers = float32_budget.hypers_by_rank(params, args.lr, adamw)
    bounds = float32_budget.envelope(traj, params, hypers)
    failures, report = float32_budget.judge(
        "compiled step", float32_budget.read_losses(w("log.jsonl")),
        safetensors_io.load_file(w("out.safetensors")), traj, bounds)
    print(json.dumps({"judged": report}))
    if failures:
        sys.exit("FAIL: " + "; ".join(failures[:4]))
    print(f"OK: {args.steps} steps: the compiled llama step is within the float32 budget "
          f"of torch's float64 LlamaForCausalLM (losses within "
          f"{report['loss_rel_err']:.3g} relative)")


if __name__ == "__main__":
    main()
