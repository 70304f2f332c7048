"""Lowering of aten.constant_pad_nd: padding (and cropping) with a value.

Hugging Face's causal-LM loss pads the labels with ignore_index before
shifting them (`F.pad(labels, (0, 1), value=-100)`).
"""

from .lower import _insert, _scalar, op
from .mlir import View

import torch

aten = torch.ops.aten


@op(aten.constant_pad_nd.default)
def _constant_pad(L, a, pad, value=0):
    x = L.get(a)
    r = len(x.shape)
    if len(pad) % 2 or len(pad) > 2 * r:
        L.fail(f"unsupported op aten.constant_pad_nd.default with pad {list(pad)}")
    lo, hi = [0] * r, [0] * r
    for k in range(len(pad) // 2):
        lo[r - 1 - k], hi[r - 1 - k] = int(pad[2 * k]), int(pad[2 * k + 1])
    shape = L.out_shape()
    dt = L.out_dt()
    out = L.fn.filled(shape, dt, _scalar(value, dt), L.loc)
    # The part of x that stays: negative pads crop it.
    kept = tuple(x.shape[d] + min(lo[d], 0) + min(hi[d], 0) for d in range(r))
    if 0 in kept:
        return out
    exprs = [(d, 1, -min(lo[d], 0)) for d in range(r)]
    part = x if all(o == 0 for _, _, o in exprs) and kept == x.shape else \
        View(x.source, kept, _compose(x, exprs))
    return _insert(L, out, L.mat(part), [max(v, 0) for v in lo], kept, [1] * r)


def _compose(x, exprs):
    from .mlir import compose
    return compose(x, exprs)
