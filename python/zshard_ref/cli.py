"""Command line: ``python3 -m zshard_ref step ...`` (see docs/reference.md)."""

import argparse
import json
import sys

import numpy as np

from . import safetensors_io as st
from .adamw import EXP_AVG, EXP_AVG_SQ, AdamWConfig, check_state, zero_state
from .gpt import GptConfig
from .mlp import LOSSES, MlpConfig
from .step import check_batch, init_params, param_specs, train_step


def _widths(text):
    try:
        return tuple(int(w) for w in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"widths must be comma-separated integers: {text!r}")


def build_parser():
    parser = argparse.ArgumentParser(prog="python3 -m zshard_ref",
                                     description="NumPy reference training steps for zshard.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("step", help="run training steps and write params + optimizer state")
    p.add_argument("--model", choices=("gpt", "mlp"), required=True)
    g = p.add_argument_group("gpt")
    g.add_argument("--layers", type=int)
    g.add_argument("--d-model", type=int)
    g.add_argument("--heads", type=int)
    g.add_argument("--vocab", type=int)
    g.add_argument("--seq", type=int)
    g.add_argument("--tied", action="store_true")
    m = p.add_argument_group("mlp")
    m.add_argument("--widths", type=_widths, help="d_0,...,d_L, e.g. 8,16,4")
    m.add_argument("--loss", choices=LOSSES, default="mse")
    p.add_argument("--batch", type=int, help="batch size B (checked against --batch-file)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--params", help="safetensors file with the parameters "
                     "(and optionally <param>.exp_avg / .exp_avg_sq)")
    src.add_argument("--init-seed", type=int, help="random init with numpy's RNG")
    data = p.add_mutually_exclusive_group(required=True)
    data.add_argument("--batch-file", help="safetensors file with the batch inputs")
    data.add_argument("--batch-seed", type=int, help="random batch with numpy's RNG")
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--start-step", type=int,
                   help="AdamW step t of the first update (default: 1, or the 'step' "
                        "metadata of --params + 1 when it holds optimizer state)")
    p.add_argument("--beta1", type=float, default=AdamWConfig.beta1)
    p.add_argument("--beta2", type=float, default=AdamWConfig.beta2)
    p.add_argument("--eps", type=float, default=AdamWConfig.eps)
    p.add_argument("--weight-decay", type=float, default=AdamWConfig.weight_decay)
    p.add_argument("--clip-grad-norm", type=float, default=0.0,
                   help="clip the global gradient norm to this before AdamW (0: off)")
    p.add_argument("--out", required=True, help="safetensors file to write")
    return parser


def model_config(args):
    if args.model == "gpt":
        missing = [f"--{n.replace('_', '-')}" for n in ("layers", "d_model", "heads", "vocab", "seq")
                   if getattr(args, n) is None]
        if missing:
            raise ValueError(f"--model gpt needs {', '.join(missing)}")
        return GptConfig(args.layers, args.d_model, args.heads, args.vocab, args.seq, args.tied)
    if args.widths is None:
        raise ValueError("--model mlp needs --widths")
    return MlpConfig(args.widths, args.loss)


def random_batch(cfg, batch_size, seed):
    rng = np.random.default_rng(seed)
    if isinstance(cfg, GptConfig):
        shape = (batch_size, cfg.seq)
        return {"tokens": rng.integers(0, cfg.vocab, size=shape).astype(np.int32),
                "targets": rng.integers(0, cfg.vocab, size=shape).astype(np.int32)}
    batch = {"x": rng.normal(size=(batch_size, cfg.widths[0])).astype(np.float32)}
    if cfg.loss == "mse":
        batch["target"] = rng.normal(size=(batch_size, cfg.widths[-1])).astype(np.float32)
    else:
        batch["labels"] = rng.integers(0, cfg.widths[-1], size=batch_size).astype(np.int32)
    return batch


def batches(cfg, batch):
    """Batch files hold one batch, or a leading step axis S (then step i uses
    entry (i - 1) mod S)."""
    lead = "tokens" if isinstance(cfg, GptConfig) else "x"
    if lead in batch and np.ndim(batch[lead]) == 3:
        count = np.shape(batch[lead])[0]
        if any(np.shape(v)[:1] != (count,) for v in batch.values()):
            raise ValueError("batch file: all inputs need the same leading step axis")
        return [{k: v[i] for k, v in batch.items()} for i in range(count)]
    return [batch]


def load_params(cfg, path):
    f = st.read_file(path)
    names = [name for name, _, _ in param_specs(cfg)]
    params = {n: f.tensors[n].astype(np.float32) for n in names if n in f.tensors}
    state = {k: v.astype(np.float32) for k, v in f.tensors.items()
             if k.endswith((EXP_AVG, EXP_AVG_SQ)) and k not in params}
    extra = sorted(set(f.tensors) - set(params) - set(state))
    missing = [n for n in names if n not in params]
    if missing or extra:
        raise ValueError(f"{path}: parameters do not match the model: missing {missing[:6]}, "
                         f"unexpected {extra[:6]}")
    if state:
        try:
            check_state(params, state)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
    return params, state, f.metadata


def run_step(args, out=sys.stdout):
    cfg = model_config(args)
    adamw = AdamWConfig(args.beta1, args.beta2, args.eps, args.weight_decay)
    start = 1
    if args.params:
        params, state, meta = load_params(cfg, args.params)
        if state and "step" in meta:
            start = int(meta["step"]) + 1
    else:
        params, state = init_params(cfg, args.init_seed), {}
    if args.start_step is not None:
        start = args.start_step
    if args.batch_file:
        all_batches = batches(cfg, st.load_file(args.batch_file))
    else:
        if args.batch is None:
            raise ValueError("--batch-seed needs --batch")
        all_batches = [random_batch(cfg, args.batch, args.batch_seed)]
    for b in all_batches:
        check_batch(cfg, b)
        lead = b["tokens"] if isinstance(cfg, GptConfig) else b["x"]
        if args.batch is not None and np.shape(lead)[0] != args.batch:
            raise ValueError(f"batch file has batch size {np.shape(lead)[0]}, "
                             f"--batch says {args.batch}")
    if args.steps < 0:
        raise ValueError("--steps must be >= 0")
    step = start - 1
    for i in range(args.steps):
        step = start + i
        loss, params, state = train_step(cfg, params, state, all_batches[i % len(all_batches)],
                                         args.lr, step, adamw,
                                         max_grad_norm=args.clip_grad_norm)
        print(json.dumps({"step": step, "loss": float(loss)}, separators=(",", ":")),
              file=out, flush=True)
    if not state:
        state = zero_state(params)
    tensors = {}
    for name, _, _ in param_specs(cfg):
        tensors[name] = np.asarray(params[name], dtype=np.float32)
        tensors[name + EXP_AVG] = np.asarray(state[name + EXP_AVG], dtype=np.float32)
        tensors[name + EXP_AVG_SQ] = np.asarray(state[name + EXP_AVG_SQ], dtype=np.float32)
    st.save_file(args.out, tensors, metadata={"step": str(step), "model": args.model,
                                              "producer": "zshard_ref"})


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "step":
            run_step(args)
    except (ValueError, OSError) as e:
        print(f"zshard_ref: error: {e}", file=sys.stderr)
        return 1
    return 0
