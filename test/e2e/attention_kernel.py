#!/usr/bin/env python3
"""The runtime's causal attention kernels against NumPy float64.

Calls zshard_rt_step_attention_fwd / _bwd of libzshard_rt (the entries
compiled steps call for zshard.causal_attention and its grad, here on the
host) on random f32 inputs and compares out, lse, dq, dk and dv with a
float64 reference that materialises the scores: odd sequence lengths (below,
at and across the kernels' 64-row tiles and 256-row blocks), heads not a
power of two, grouped kv heads (kv_heads = heads / 3) and one query per
sequence. Each case runs twice: on contiguous [batch, heads, seq,
head_dim] operands, and through zshard_rt_step_attention_strided_fwd / _bwd on
[batch, seq, heads, head_dim] views with padded rows (q, k and v slices of
one projection, as compiled steps pass them), whose padding must be neither
read (NaN there) nor written.
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


def heads_view(buf, heads, head_dim, start):
    """The [batch, heads, seq, head_dim] view of head columns [start, start +
    heads * head_dim) of a [batch, seq, width] buffer."""
    batch, seq, _ = buf.shape
    return buf[:, :, start:start + heads * head_dim].reshape(
        batch, seq, heads, head_dim).transpose(0, 2, 1, 3)


def strided(batch, heads, seq, head_dim, width, start):
    """heads_view of a NaN [batch, seq, width] buffer, and the buffer."""
    buf = np.full((batch, seq, width), np.nan, np.float32)
    return heads_view(buf, heads, head_dim, start), buf


def operand(view):
    """The pointer and the batch, head and seq strides (elements) of view."""
    assert view.strides[3] == 4
    return [view.ctypes.data_as(F32P)] + [ctypes.c_int64(x // 4) for x in view.strides[:3]]


def run_case(lib, batch, heads, kv_heads, seq, head_dim, rng, with_strides):
    scale = float(np.float32(1.0 / np.sqrt(head_dim)))
    q_shape = (batch, heads, seq, head_dim)
    kv_shape = (batch, kv_heads, seq, head_dim)
    if with_strides:
        # q, k, v: one projection's columns, 3 more at the end of its rows.
        width = (heads + 2 * kv_heads) * head_dim + 3
        q, qkv = strided(batch, heads, seq, head_dim, width, 0)
        k = heads_view(qkv, kv_heads, head_dim, heads * head_dim)
        v = heads_view(qkv, kv_heads, head_dim, (heads + kv_heads) * head_dim)
        q[...] = rng.standard_normal(q_shape)
        k[...] = rng.standard_normal(kv_shape)
        v[...] = rng.standard_normal(kv_shape)
        dout, _ = strided(batch, heads, seq, head_dim, heads * head_dim + 1, 0)
        dout[...] = rng.standard_normal(q_shape)
        outputs = [strided(batch, h, seq, head_dim, h * head_dim + 2, 1)
                   for h in (heads, heads, kv_heads, kv_heads)]
        (out, _), (dq, _), (dk, _), (dv, _) = outputs
    else:
        q = rng.standard_normal(q_shape).astype(np.float32)
        k = rng.standard_normal(kv_shape).astype(np.float32)
        v = rng.standard_normal(kv_shape).astype(np.float32)
        dout = rng.standard_normal(q.shape).astype(np.float32)
        # NaN-filled outputs: every element must be written (dq, dk, dv too).
        out = np.full(q.shape, np.nan, np.float32)
        dq = np.full(q.shape, np.nan, np.float32)
        dk = np.full(k.shape, np.nan, np.float32)
        dv = np.full(k.shape, np.nan, np.float32)
    lse = np.full(q_shape[:3], np.nan, np.float32)
    ptr = lambda a: a.ctypes.data_as(F32P)  # noqa: E731
    sizes = [ctypes.c_int64(x) for x in (batch, heads, kv_heads, seq, head_dim)]
    sizes.append(ctypes.c_float(scale))
    if with_strides:
        lib.zshard_rt_step_attention_strided_fwd(
            *sizes, *operand(q), *operand(k), *operand(v), *operand(out), ptr(lse))
        lib.zshard_rt_step_attention_strided_bwd(
            *sizes, *operand(q), *operand(k), *operand(v), *operand(out), ptr(lse),
            *operand(dout), *operand(dq), *operand(dk), *operand(dv))
    else:
        lib.zshard_rt_step_attention_fwd(*sizes, ptr(q), ptr(k), ptr(v), ptr(out),
                                         ptr(lse))
        lib.zshard_rt_step_attention_bwd(*sizes, ptr(q), ptr(k), ptr(v), ptr(out),
                                         ptr(lse), ptr(dout), ptr(dq), ptr(dk), ptr(dv))
    expected = reference(*(x.astype(np.float64) for x in (q, k, v, dout)),
                         float(scale))
    failures = []
    for name, got, want in zip(("out", "lse", "dq", "dk", "dv"),
                               (out, lse, dq, dk, dv), expected):
        err = np.abs(got.astype(np.float64) - want).max() / max(
            1.0, np.abs(want).max())
        if not np.isfinite(err) or err > TOLERANCE:
            failures.append(f"{name}: relative error {err:.3g} > {TOLERANCE}")
    if with_strides:
        for name, (view, buf) in zip(("out", "dq", "dk", "dv"), outputs):
            untouched = np.isnan(buf).sum() == buf.size - view.size
            if not untouched:
                failures.append(f"{name}: written outside its view")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lib", required=True, help="libzshard_rt.so")
    args = parser.parse_args()
    lib = ctypes.CDLL(args.lib)
    for name in ("zshard_rt_step_attention_fwd", "zshard_rt_step_attention_bwd",
                 "zshard_rt_step_attention_strided_fwd",
                 "zshard_rt_step_attention_strided_bwd"):
        getattr(lib, name).restype = None
    rng = np.random.default_rng(17)
    # (batch, heads, kv_heads, seq, head_dim)
    cases = [(2, 6, 2, 12, 8), (2, 6, 2, 13, 8), (1, 5, 5, 13, 7),
             (1, 3, 1, 1, 4), (1, 6, 2, 64, 16), (2, 3, 1, 65, 8),
             (1, 9, 3, 130, 12), (1, 2, 2, 200, 64), (1, 3, 1, 257, 8),
             (1, 4, 2, 300, 16)]
    failed = 0
    for case in cases:
        for with_strides in (False, True):
            failures = run_case(lib, *case, rng, with_strides)
            label = "batch %d heads %d kv %d seq %d head_dim %d" % case
            label += " strided" if with_strides else ""
            if failures:
                failed += 1
                print(f"FAIL {label}: " + "; ".join(failures))
            else:
                print(f"ok   {label}")
    if failed:
        print(f"{failed} of {2 * len(cases)} cases failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
