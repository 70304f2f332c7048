"""Mean losses over the global batch, not over each rank's slice of it.

A loss that averages over counted positions (`F.cross_entropy` or
`F.nll_loss` with `reduction="mean"`: the positions whose target is not
`ignore_index`) divides by the count on the batch it sees. Each rank of a
sharded step sees its slice, and gradients and the reported loss are means
over the ranks, so the step would train on the mean of the ranks' means:
torch's global mean only when every rank counts as many positions. While the
step is traced, a torch function mode replaces such a call by

    loss = cross_entropy(..., reduction="sum") / zshard.batch_mean(count)

where `count` is the number of counted positions and `zshard::batch_mean` is
a custom op printed as the dialect's `zshard.batch_mean` (docs/dialect.md):
the mean of its input over every slice of the global batch (ranks and
microbatches). On one slice it is the identity, so the eager result is
torch's own. Averaged over S slices, sum_s(sum_s / mean(count)) / S is the
global sum over the global count, as torch computes on the whole batch.

Calls with class weights, legacy `size_average`/`reduce`, probability
targets or another reduction go to torch unchanged (their mean is over the
slice, documented in docs/zshard-export.md).
"""

import inspect

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

LIBRARY = "zshard"


@torch.library.custom_op(f"{LIBRARY}::batch_mean", mutates_args=())
def batch_mean(x: torch.Tensor) -> torch.Tensor:
    """The mean of x over the slices of the global batch: x on one slice."""
    return x.clone()


@batch_mean.register_fake
def _(x):
    return torch.empty_like(x)


_LOSSES = (F.cross_entropy, F.nll_loss)
_SIGNATURES = {f: inspect.signature(f) for f in _LOSSES}


def counted_mean_arguments(func, args, kwargs):
    """The bound arguments of a loss call whose "mean" is over the positions
    whose target is not ignore_index, or None for any other call."""
    try:
        bound = _SIGNATURES[func].bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    a = bound.arguments
    target = a["target"]
    if a["reduction"] != "mean" or a["weight"] is not None or a["size_average"] is not None \
            or a["reduce"] is not None:
        return None
    if not isinstance(target, torch.Tensor) or target.is_floating_point() \
            or target.is_complex() or target.dim() == 0:
        return None
    if not isinstance(a["input"], torch.Tensor) or a["input"].dtype != torch.float32:
        return None
    return bound


class BatchMeanLossMode(TorchFunctionMode):
    """Rewrites counted-mean losses as sum / zshard.batch_mean(count)."""

    def __init__(self):
        super().__init__()
        self.matched = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _SIGNATURES:
            bound = counted_mean_arguments(func, args, kwargs)
            if bound is not None:
                self.matched += 1
                bound.arguments["reduction"] = "sum"
                total = func(*bound.args, **bound.kwargs)
                target = bound.arguments["target"]
                count = (target != bound.arguments["ignore_index"]).sum().to(torch.float32)
                return total / torch.ops.zshard.batch_mean(count)
        return func(*args, **kwargs)
