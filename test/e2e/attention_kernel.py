#!/usr/bin/env python3
"""The runtime's causal attention kernels against NumPy float64.

Calls zshard_rt_step_attention_fwd / _bwd of libzshard_rt (the entries
compiled steps call for zshard.causal_attention and its grad, here on the
host) on random f32 inputs and compares out, lse, dq, dk and dv with a
float64 reference that materialises the scores: odd sequence lengths (below,
at and across the kernels' 64-row tiles), heads not a power of two, grouped
kv heads (kv_heads = heads / 3) and one query per sequence.
"""

import argparse
import ctypes
import sys

import numpy as np

F32P = ctypes.POINTER(ctypes.c_float)
# Relative to the largest magnitude of each reference result: f32 products of
# length head_dim and softmax sums of length seq.
TOLERANCE = 2e-5


def reference(q, k, v, dout, scale):
    """out, lse, dq, dk, dv in float64 (GQA: head h reads kv head h // G)."""
    group = q.shape[1] // k.shape[1]
    kr, vr = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    t = q.shape[2]
    s = scale * (q @ np.swapaxes(kr, -1, -2))
    s = np.where(np.triu(np.ones((t, t), dtype=bool), k=1), -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    lse = (m + np.log(np.exp(s - m).sum(axis=-1, keepdims=True)))[..., 0]
    p = np.exp(s - lse[..., None])
    out = p @ vr
    dv = np.swapaxes(p, -1, -2) @ dout
    dp = dout @ np.swapaxes(vr, -1, -2)
    ds = p * (dp - (dout * out).sum(axis=-1, keepdims=True))
    dq = scale * (ds @ kr)
    dk = scale * (np.swapaxes(ds, -1, -2) @ q)

    def group_sum(x):
        b, h, tt, d = x.shape
        return x.reshape(b, h // group, group, tt, d).sum(axis=2)

    return out, lse, dq, group_sum(dk), group_sum(dv)


def run_case(lib, batch, heads, kv_heads, seq, head_dim, rng):
    scale = float(np.float32(1.0 / np.sqrt(head_dim)))
    q = rng.standard_normal((batch, heads, seq, head_dim)).astype(np.float32)
    k = rng.standard_normal((batch, kv_heads, seq, head_dim)).astype(np.float32)
    v = rng.standard_normal((batch, kv_heads, seq, head_dim)).astype(np.float32)
    dout = rng.standard_normal(q.shape).astype(np.float32)
    out = np.full(q.shape, np.nan, np.float32)
    lse = np.full(q.shape[:3], np.nan, np.float32)
    # NaN-filled outputs: every element must be written (dq, dk, dv too).
    dq = np.full(q.shape, np.nan, np.float32)
    dk = np.full(k.shape, np.nan, np.float32)
    dv = np.full(k.shape, np.nan, np.float32)
    ptr = lambda a: a.ctypes.data_as(F32P)
    sizes = [ctypes.c_int64(x) for x in (batch, heads, kv_heads, seq, head_dim)]
    lib.zshard_rt_step_attention_fwd(*sizes, ctypes.c_float(scale), ptr(q),
                                     ptr(k), ptr(v), ptr(out), ptr(lse))
    lib.zshard_rt_step_attention_bwd(*sizes, ctypes.c_float(scale), ptr(q),
                                     ptr(k), ptr(v), ptr(out), ptr(lse),
                                     ptr(dout), ptr(dq), ptr(dk), ptr(dv))
    expected = reference(*(x.astype(np.float64) for x in (q, k, v, dout)),
                         float(scale))
    failures = []
    for name, got, want in zip(("out", "lse", "dq", "dk", "dv"),
                               (out, lse, dq, dk, dv), expected):
        err = np.abs(got.astype(np.float64) - want).max() / max(
            1.0, np.abs(want).max())
        if not np.isfinite(err) or err > TOLERANCE:
            failures.append(f"{name}: relative error {err:.3g} > {TOLERANCE}")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lib", required=True, help="libzshard_rt.so")
    args = parser.parse_args()
    lib = ctypes.CDLL(args.lib)
    for name in ("zshard_rt_step_attention_fwd", "zshard_rt_step_attention_bwd"):
        getattr(lib, name).restype = None
    rng = np.random.default_rng(17)
    # (batch, heads, kv_heads, seq, head_dim)
    cases = [(2, 6, 2, 12, 8), (2, 6, 2, 13, 8), (1, 5, 5, 13, 7),
             (1, 3, 1, 1, 4), (1, 6, 2, 64, 16), (2, 3, 1, 65, 8),
             (1, 9, 3, 130, 12), (1, 2, 2, 200, 64)]
    failed = 0
    for case in cases:
        failures = run_case(lib, *case, rng)
        label = "batch %d heads %d kv %d seq %d head_dim %d" % case
        if failures:
            failed += 1
            print(f"FAIL {label}: " + "; ".join(failures))
        else:
            print(f"ok   {label}")
    if failed:
        print(f"{failed} of {len(cases)} cases failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
