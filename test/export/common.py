"""Helpers shared by the exporter tests and bench/peer: paths, running the
zshard tools, batch files, eager torch training."""

import copy
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from zshard_ref import safetensors_io  # noqa: E402


def bin_dir():
    d = os.environ.get("ZSHARD_BIN") or os.path.join(ROOT, "build", "bin")
    return os.path.abspath(d)


def tool(name):
    return os.path.join(bin_dir(), name)


def run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def losses(path):
    with open(path) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]


def random_batches(steps, rows, seq, vocab, seed=7):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, vocab, (steps, rows, seq), generator=g)
    targets = (idx * 3 + 1) % vocab  # learnable: the loss falls within a few steps
    return idx, targets


def save_batches(path, batches):
    safetensors_io.save_file(path, {k: v.numpy().astype(np.int32) if not v.is_floating_point()
                                    else v.numpy().astype(np.float32)
                                    for k, v in batches.items()})


def shard(step_mlir, out_mlir, ranks, strategy, pattern="transformer.h.<i>"):
    units = f"policy=transformer pattern={pattern} ranks={ranks} strategy={strategy}"
    run([tool("zshard-opt"), step_mlir, "--mlir-print-debuginfo",
         f"--zshard-form-units={units}", "--zshard-shard", "-o", out_mlir])


def eager_losses(model, optimizer, batches, steps, loss_fn=None):
    """Trains a copy-free `model` with `optimizer` on batches[name][s]; returns losses."""
    out = []
    for s in range(steps):
        batch = {k: v[s] for k, v in batches.items()}
        res = loss_fn(model, **batch) if loss_fn else model(**batch)
        loss = res[-1] if isinstance(res, (tuple, list)) else res
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        out.append(float(loss.detach()))
    return out


def clone_optimizer(model_copy, model, optimizer):
    """The same AdamW configuration over the parameters of a deep copy."""
    index = {id(p): n for n, p in model.named_parameters()}
    copy_params = dict(model_copy.named_parameters())
    groups = []
    for g in optimizer.param_groups:
        ng = {k: v for k, v in g.items() if k != "params"}
        ng["params"] = [copy_params[index[id(p)]] for p in g["params"]]
        groups.append(ng)
    return type(optimizer)(groups)


def deepcopy_with_optimizer(model, optimizer):
    m2 = copy.deepcopy(model)
    return m2, clone_optimizer(m2, model, optimizer)
