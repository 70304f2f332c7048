"""AdamW as in docs/models.md (torch.optim.AdamW semantics).

Optimizer state is a flat dict keyed like the output files:
``<param>.exp_avg`` (first moment m) and ``<param>.exp_avg_sq`` (second moment v).
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AdamWConfig:
    """The compile-time constants; ``lr`` and ``step`` are step inputs."""

    beta1: float = 0.9
    beta2: float = 0.95
    eps: float = 1e-8
    weight_decay: float = 0.1


EXP_AVG = ".exp_avg"
EXP_AVG_SQ = ".exp_avg_sq"


def decays(param):
    """Weight decay applies to parameters of rank >= 2 only."""
    return np.ndim(param) >= 2


def adamw_update(p, g, m, v, lr, step, cfg=AdamWConfig(), decay=None):
    """One AdamW update of one parameter; returns new ``(p, m, v)``.

    All arithmetic is in the dtype of ``p`` (hyper-parameters are cast to it
    first, including the bias corrections ``1 - beta^t``), in the order written
    in docs/models.md. ``decay`` defaults to ``rank(p) >= 2``.
    """
    step = int(step)
    if step < 1:
        raise ValueError(f"AdamW step must be >= 1 (1 for the first update), got {step}")
    dt = p.dtype.type
    if decay is None:
        decay = decays(p)
    one = dt(1.0)
    b1, b2, eps, lr_ = dt(cfg.beta1), dt(cfg.beta2), dt(cfg.eps), dt(lr)
    if decay and cfg.weight_decay != 0.0:
        p = p - lr_ * dt(cfg.weight_decay) * p
    m = b1 * m + (one - b1) * g
    v = b2 * v + (one - b2) * g * g
    bc1 = one - b1 ** dt(step)
    bc2 = one - b2 ** dt(step)
    m_hat = m / bc1
    v_hat = v / bc2
    p = p - lr_ * m_hat / (np.sqrt(v_hat) + eps)
    return p, m, v


def clip_coefficient(grads, max_norm, dtype=np.float32):
    """The factor torch.nn.utils.clip_grad_norm_ scales every gradient by:
    ``min(1, max_norm / (total_norm + 1e-6))`` with ``total_norm`` the 2-norm
    of all gradients together, computed in ``dtype``."""
    if not max_norm > 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}")
    dt = np.dtype(dtype).type
    squares = [np.sum(np.square(np.asarray(g, dtype=dtype)), dtype=dtype)
               for g in grads.values()]
    total_norm = np.sqrt(np.sum(np.asarray(squares, dtype=dtype), dtype=dtype))
    return min(dt(1.0), dt(max_norm) / (total_norm + dt(1e-6)))


def zero_state(params, dtype=np.float32):
    state = {}
    for name, p in params.items():
        state[name + EXP_AVG] = np.zeros(np.shape(p), dtype=dtype)
        state[name + EXP_AVG_SQ] = np.zeros(np.shape(p), dtype=dtype)
    return state


def check_state(params, state):
    """Raise ValueError unless ``state`` has both moments, right shapes, for
    every parameter and nothing else."""
    expected = {}
    for name, p in params.items():
        expected[name + EXP_AVG] = np.shape(p)
        expected[name + EXP_AVG_SQ] = np.shape(p)
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    if missing or extra:
        raise ValueError(f"optimizer state does not match the parameters: "
                         f"missing {missing[:6]}, unexpected {extra[:6]}")
    for name, shape in expected.items():
        if np.shape(state[name]) != tuple(shape):
            raise ValueError(f"optimizer state {name!r} has shape "
                             f"{list(np.shape(state[name]))}, expected {list(shape)}")


def adamw_step(params, grads, state, lr, step, cfg=AdamWConfig(), dtype=np.float32,
               max_grad_norm=0.0):
    """Update every parameter; ``state`` None or empty means zero moments.
    With ``max_grad_norm > 0`` the gradients are first clipped to that global
    norm (``clip_coefficient``).

    Returns ``(new_params, new_state)``; inputs are not modified.
    """
    if not state:
        state = zero_state(params, dtype)
    check_state(params, state)
    scale = clip_coefficient(grads, max_grad_norm, dtype) if max_grad_norm else None
    new_params, new_state = {}, {}
    for name, p in params.items():
        p = np.asarray(p, dtype=dtype)
        g = np.asarray(grads[name], dtype=dtype)
        if scale is not None:
            g = g * scale
        m = np.asarray(state[name + EXP_AVG], dtype=dtype)
        v = np.asarray(state[name + EXP_AVG_SQ], dtype=dtype)
        p, m, v = adamw_update(p, g, m, v, lr, step, cfg)
        new_params[name] = p
        new_state[name + EXP_AVG] = m
        new_state[name + EXP_AVG_SQ] = v
    return new_params, new_state
