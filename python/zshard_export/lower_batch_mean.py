"""Lowering of `zshard::batch_mean` (batch_mean.py) to the dialect's
`zshard.batch_mean`: the mean of a scalar over the global batch's slices."""

import torch

from .lower import op
from .mlir import Val


@op(torch.ops.zshard.batch_mean.default)
def _batch_mean(L, a):
    x = L.mat(L.get(a))
    if x.dt != "f32" or x.shape != ():
        L.fail(f"internal: zshard.batch_mean of {x.type} (please report)")
    return Val(L.fn.op(f"zshard.batch_mean {x.name} : {x.type}", L.loc), (), "f32")
