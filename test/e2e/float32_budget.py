"""The numerics judge of the end-to-end tests: a float32 run against a float64
reference with an error budget derived from what float32 can promise.

A float32 training run R and a float64 run X of the same steps (the NumPy
reference, python/zshard_ref, from the same initial state on the same
batches) are compared element by element. R passes when

* every loss is within LOSS_REL of X's loss, relative, and
* every element of every parameter and optimizer-state tensor is within its
  own bound B of X's element, where B comes from pushing a bound on the
  float32 gradient error through AdamW with interval arithmetic.

The bound on the gradient error is the one assumption: at every step each
element of R's gradient is within GRAD_REL * max|g| of X's, g being X's
gradient of that tensor at that step. GRAD_REL is 2**-12 (4096 units of
float32 roundoff, docs/testing.md says why). Everything after the gradient
is AdamW, an elementwise map the judge evaluates exactly on intervals:

    m_t = b1 m + (1 - b1) g          |dm_t| <= b1 |dm| + (1 - b1) dg
    v_t = b2 v + (1 - b2) g^2        |dv_t| <= b2 |dv| + (1 - b2)(2|g| dg + dg^2)
    u_t = m^ / (sqrt(v^) + eps)      the extremes of m^ / (sqrt(v^) + eps) over the
                                     intervals, clamped to |u_t| <= C_t
    p_t = (1 - lr wd) p - lr u_t     |dp_t| <= (1 - lr wd)|dp| + lr |du_t|

plus the rounding of each of these float32 updates (STATE_ULPS units of
roundoff of each result, per step). C_t is Adam's own bound on its update: by
Cauchy-Schwarz |m_t| <= (1 - b1)/sqrt(1 - b2) sqrt(sum_k (b1^2/b2)^k)
sqrt(v_t) for any gradient sequence, so an element whose gradient is lost in
rounding (|g| < dg, such as the key slice of c_attn.bias, whose gradient is
exactly zero) may move by up to 2 lr C_t in either direction, and the judge
says so instead of failing on it; an element with a clear gradient gets a
bound of a few roundoffs of its update.

Nothing here depends on a second float32 run, on the BLAS kernel or on the
CPU the steps were compiled for: each run is judged against float64 alone.
"""

import math

import numpy as np

U32 = 2.0 ** -24
#: Per-element gradient error, relative to the tensor's largest gradient.
GRAD_REL = 2.0 ** -12
#: Loss error, relative.
LOSS_REL = 2.0 ** -14
#: Rounding of one float32 AdamW update, in units of roundoff of its result.
STATE_ULPS = 8.0


class Trajectory:
    """X: the float64 reference's losses, the gradients AdamW consumed at
    every step (after clipping) and its state after the last step."""

    def __init__(self, losses, grads, params, state):
        self.losses, self.grads = losses, grads
        self.params, self.state = params, state


def reference_trajectory(cfg, init, batches, steps, lr, adamw, max_grad_norm=0.0):
    """Runs the float64 reference `steps` steps from `init` (float32 arrays by
    name, parameters and optionally their moments) on `batches` (arrays with
    a leading step axis)."""
    from zshard_ref import adamw_update, clip_coefficient, loss_and_grads, param_specs

    names = [name for name, _, _ in param_specs(cfg)]
    params = {n: np.asarray(init[n], np.float64) for n in names}
    state = {}
    for n in names:
        for slot in (".exp_avg", ".exp_avg_sq"):
            state[n + slot] = np.asarray(init.get(n + slot, np.zeros_like(params[n])),
                                         np.float64)
    losses, grads = [], []
    for s in range(steps):
        batch = {k: v[s] for k, v in batches.items()}
        loss, g = loss_and_grads(cfg, params, batch, dtype=np.float64)
        if max_grad_norm:
            scale = clip_coefficient(g, max_grad_norm, np.float64)
            g = {n: x * scale for n, x in g.items()}
        losses.append(float(loss))
        grads.append(g)
        for n in names:
            p, m, v = adamw_update(params[n], g[n], state[n + ".exp_avg"],
                                   state[n + ".exp_avg_sq"], lr, s + 1, adamw)
            state[n + ".exp_avg"], state[n + ".exp_avg_sq"] = m, v
            params[n] = p
    return Trajectory(losses, grads, params, state)


def _update_bound(adamw, t):
    """C_t: the largest |m^ / (sqrt(v^) + eps)| AdamW can produce at step t."""
    b1, b2 = adamw.beta1, adamw.beta2
    r = b1 * b1 / b2
    series = sum(r ** k for k in range(t))
    bc1, bc2 = 1.0 - b1 ** t, 1.0 - b2 ** t
    return (1.0 - b1) / math.sqrt(1.0 - b2) * math.sqrt(series) * math.sqrt(bc2) / bc1


def hypers_by_rank(init, lr, adamw):
    """{name: (lr, AdamWConfig, decays)} for the zshard steps: one config,
    weight decay on tensors of rank >= 2 (docs/models.md)."""
    from zshard_ref.adamw import decays

    return {n: (lr, adamw, decays(np.asarray(x))) for n, x in init.items()
            if not n.endswith((".exp_avg", ".exp_avg_sq"))}


def envelope(traj, init, hypers, grad_rel=GRAD_REL, state_ulps=STATE_ULPS):
    """Per-element bounds {tensor name: array} on |R - X| after the last step,
    for every parameter and its two moments; `hypers` gives each parameter's
    (lr, AdamWConfig, whether it decays)."""
    bounds = {}
    for n in traj.params:
        lr, adamw, decay = hypers[n]
        b1, b2, eps = adamw.beta1, adamw.beta2, adamw.eps
        p = np.asarray(init[n], np.float64)
        m = np.asarray(init.get(n + ".exp_avg", np.zeros_like(p)), np.float64)
        v = np.asarray(init.get(n + ".exp_avg_sq", np.zeros_like(p)), np.float64)
        dp, dm, dv = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
        shrink = 1.0 - lr * adamw.weight_decay if decay else 1.0
        for s, grads in enumerate(traj.grads):
            t = s + 1
            g = grads[n]
            dg = grad_rel * float(np.max(np.abs(g))) if g.size else 0.0
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            dm = b1 * dm + (1 - b1) * dg + state_ulps * U32 * np.abs(m)
            dv = b2 * dv + (1 - b2) * (2 * np.abs(g) * dg + dg * dg) + state_ulps * U32 * v
            bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
            lo, hi = (m - dm) / bc1, (m + dm) / bc1
            s_lo = np.sqrt(np.maximum(v - dv, 0.0) / bc2) + eps
            s_hi = np.sqrt((v + dv) / bc2) + eps
            u = (m / bc1) / (np.sqrt(v / bc2) + eps)
            u_hi = np.where(hi >= 0, hi / s_lo, hi / s_hi)
            u_lo = np.where(lo <= 0, lo / s_lo, lo / s_hi)
            cap = _update_bound(adamw, t) * (1 + state_ulps * U32)
            u_hi, u_lo = np.minimum(u_hi, cap), np.maximum(u_lo, -cap)
            du = np.maximum(u_hi - u, u - u_lo) + state_ulps * U32 * np.abs(u)
            p = shrink * p - lr * u
            dp = shrink * dp + lr * du + state_ulps * U32 * np.abs(p)
        bounds[n], bounds[n + ".exp_avg"], bounds[n + ".exp_avg_sq"] = dp, dm, dv
    return bounds


def judge(what, losses, state, traj, bounds, loss_rel=LOSS_REL):
    """Judges run `what`: its per-step `losses` and final `state` (arrays by
    name) against `traj` within `bounds`. Returns (failures, report): the
    failures as one-line strings, the report a JSON-able dict with the worst
    ratio of error to bound per tensor kind (the margin: 1.0 is the limit)."""
    failures = []
    report = {"run": what, "loss_rel_err": 0.0, "loss_budget": loss_rel}
    if len(losses) != len(traj.losses):
        failures.append(f"{what}: logged {len(losses)} losses, expected {len(traj.losses)}")
    for t, (got, want) in enumerate(zip(losses, traj.losses)):
        err = abs(got - want) / abs(want)
        report["loss_rel_err"] = max(report["loss_rel_err"], err)
        if err > loss_rel:
            failures.append(f"{what}: loss of step {t + 1} is {got!r}, float64 says {want!r} "
                            f"({err:.3g} relative, budget {loss_rel:.3g})")
    want = dict(traj.params)
    want.update(traj.state)
    worst = {}
    for name, exact in want.items():
        if name not in state:
            failures.append(f"{what}: the checkpoint lacks '{name}'")
            continue
        got = np.asarray(state[name], np.float64)
        if got.shape != exact.shape:
            failures.append(f"{what}: '{name}' has shape {list(got.shape)}, "
                            f"expected {list(exact.shape)}")
            continue
        err = np.abs(got - exact)
        bound = bounds[name]
        ratio = np.where(err == 0, 0.0, err / np.maximum(bound, 1e-300))
        i = int(np.argmax(ratio)) if ratio.size else 0
        r = float(ratio.flat[i]) if ratio.size else 0.0
        kind = name.rsplit(".", 1)[-1] if name.endswith(("exp_avg", "exp_avg_sq")) else "param"
        if r > worst.get(kind, ("", -1.0))[1]:
            worst[kind] = (name, r)
        if r > 1.0 or not np.all(np.isfinite(got)):
            idx = np.unravel_index(i, got.shape) if got.ndim else ()
            failures.append(
                f"{what}: '{name}'{list(idx)} is {got.flat[i]:.9g}, float64 says "
                f"{exact.flat[i]:.9g}: off by {err.flat[i]:.3g}, budget {bound.flat[i]:.3g}")
    report["margin"] = {k: {"tensor": n, "error_over_budget": r} for k, (n, r) in worst.items()}
    return failures, report


def read_losses(path):
    """The per-step losses of a `zshard-run --log-json` file."""
    import json

    with open(path) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]


def judge_runs(cfg, init, batches, steps, lr, adamw, runs, max_grad_norm=0.0):
    """Judges each of `runs` ({name: (losses, state)}) against one float64
    trajectory from `init`. Returns (failures, reports)."""
    traj = reference_trajectory(cfg, init, batches, steps, lr, adamw, max_grad_norm)
    bounds = envelope(traj, init, hypers_by_rank(init, lr, adamw))
    failures, reports = [], []
    for name, (losses, state) in runs.items():
        f, r = judge(name, losses, state, traj, bounds)
        failures += f
        reports.append(r)
    return failures, reports
