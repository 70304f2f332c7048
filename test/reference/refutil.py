"""Shared helpers of the reference tests: import path and finite differences."""

import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(REPO, "python")
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

FD_STEP = 1e-6
TOL = 1e-3


def rel_err(analytic, numeric):
    """Norm-based relative error ``|a - n| / max(|a|, |n|)`` (0 when both vanish)."""
    a = np.asarray(analytic, dtype=np.float64).ravel()
    n = np.asarray(numeric, dtype=np.float64).ravel()
    scale = max(np.linalg.norm(a), np.linalg.norm(n))
    if scale < 1e-12:
        return 0.0
    return float(np.linalg.norm(a - n) / scale)


def numeric_grad(f, x, h=FD_STEP):
    """Central differences of the scalar ``f()`` with respect to every element
    of the float64 array ``x``, which ``f`` reads and which is perturbed in place."""
    assert x.dtype == np.float64, x.dtype
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + h
        fp = float(f())
        flat[i] = old - h
        fm = float(f())
        flat[i] = old
        gflat[i] = (fp - fm) / (2 * h)
    return g


def projection(rng, shape):
    """A random weight R so that ``sum(out * R)`` turns an output into a scalar."""
    return rng.normal(size=shape)
