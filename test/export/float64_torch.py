"""Exported steps judged against torch in float64.

The exporter's tests train the same module three ways: the compiled step
(float32), torch's eager training (float32) and torch's eager training of a
float64 copy. Both float32 runs are judged against the float64 one with the
float32 error budget of test/e2e/float32_budget.py (docs/testing.md), each
parameter with its own optimizer group's lr, betas, eps and weight decay, so
no judge depends on which BLAS kernel or CPU either float32 run used.
"""

import copy
import os
import sys

from common import ROOT, clone_optimizer

sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
import float32_budget  # noqa: E402
from zshard_ref import AdamWConfig  # noqa: E402


def _loss(model, batch, loss_fn):
    res = loss_fn(model, **batch) if loss_fn else model(**batch)
    return res[-1] if isinstance(res, (tuple, list)) else res


def trajectory(model, optimizer, batches, steps, loss_fn=None):
    """Trains a float64 copy of `model` (untouched) with a copy of
    `optimizer` on batches[name][s]. Returns (trajectory, init, hypers):
    the float64 losses, gradients and final state, the initial parameters,
    and each parameter's (lr, AdamWConfig, decays) for the judge."""
    m64 = copy.deepcopy(model).double()
    opt64 = clone_optimizer(m64, model, optimizer)
    names = {id(p): n for n, p in m64.named_parameters()}
    hypers = {}
    for group in opt64.param_groups:
        b1, b2 = group["betas"]
        cfg = AdamWConfig(beta1=b1, beta2=b2, eps=group["eps"],
                          weight_decay=group["weight_decay"])
        for p in group["params"]:
            hypers[names[id(p)]] = (group["lr"], cfg, True)
    init = {n: p.detach().numpy().copy() for n, p in m64.named_parameters()}
    losses, grads = [], []
    for s in range(steps):
        batch = {k: v[s].double() if v.is_floating_point() else v[s]
                 for k, v in batches.items()}
        loss = _loss(m64, batch, loss_fn)
        opt64.zero_grad(set_to_none=True)
        loss.backward()
        grads.append({n: p.grad.detach().numpy().copy() for n, p in m64.named_parameters()})
        opt64.step()
        losses.append(float(loss.detach()))
    params = {n: p.detach().numpy().copy() for n, p in m64.named_parameters()}
    state = {}
    for n, p in m64.named_parameters():
        st = opt64.state[p]
        state[n + ".exp_avg"] = st["exp_avg"].detach().numpy().copy()
        state[n + ".exp_avg_sq"] = st["exp_avg_sq"].detach().numpy().copy()
    return float32_budget.Trajectory(losses, grads, params, state), init, hypers


def torch_state(model, optimizer):
    """The parameters and AdamW moments of a trained module, by checkpoint name."""
    out = {}
    for n, p in model.named_parameters():
        out[n] = p.detach().numpy()
        st = optimizer.state[p]
        out[n + ".exp_avg"] = st["exp_avg"].detach().numpy()
        out[n + ".exp_avg_sq"] = st["exp_avg_sq"].detach().numpy()
    return out


def judge(traj, init, hypers, runs):
    """Judges each of `runs` ({name: (losses, state)}); returns (failures,
    reports) as float32_budget.judge does."""
    bounds = float32_budget.envelope(traj, init, hypers)
    failures, reports = [], []
    for name, (losses, state) in runs.items():
        f, r = float32_budget.judge(name, losses, state, traj, bounds)
        failures += f
        reports.append(r)
    return failures, reports

