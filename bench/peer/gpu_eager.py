#!/usr/bin/env python3
"""Torch eager on a GPU, the peer of scripts/gpu-check.sh's benchmark: the
exporter's nanoGPT example (pre-LayerNorm GPT, causal SDPA, tanh GELU) with
the same layers, width, heads, vocab, sequence and batch, in bf16, trained
with nanoGPT's AdamW on random tokens. Prints one JSON object: the median
step time after the warm-up steps, tokens/s and the peak allocated memory.

usage: gpu_eager.py --layers L --d-model D --heads H --vocab V --seq T --batch B
                    [--steps 10] [--warmup 2]
"""

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load_nanogpt():
    # The example file alone: the exporter package itself is not needed.
    path = os.path.join(HERE, "..", "..", "python", "zshard_export", "examples", "nanogpt.py")
    spec = importlib.util.spec_from_file_location("nanogpt", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    p = argparse.ArgumentParser()
    for name in ("layers", "d-model", "heads", "vocab", "seq", "batch"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    args = p.parse_args()
    import torch
    if not torch.cuda.is_available():
        sys.exit("gpu_eager.py: error: torch sees no CUDA device")
    nanogpt = load_nanogpt()
    model, _, _, _ = nanogpt.make(layers=args.layers, heads=args.heads, d_model=args.d_model,
                                  vocab=args.vocab, seq=args.seq, batch=args.batch)
    model = model.to("cuda", torch.bfloat16)
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
    g = torch.Generator(device="cuda").manual_seed(1)
    times, losses = [], []
    for _ in range(args.steps):
        idx = torch.randint(0, args.vocab, (args.batch, args.seq), device="cuda", generator=g)
        targets = torch.randint(0, args.vocab, (args.batch, args.seq), device="cuda", generator=g)
        torch.cuda.synchronize()
        start = time.perf_counter()
        _, loss = model(idx, targets)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
        losses.append(loss.item())
    ms = statistics.median(times[args.warmup:])
    print(json.dumps({"step_ms_median": ms, "tokens_per_s": args.batch * args.seq / (ms / 1e3),
                      "peak_bytes_allocated": torch.cuda.max_memory_allocated(),
                      "torch": torch.__version__, "losses": losses}))


if __name__ == "__main__":
    main()
