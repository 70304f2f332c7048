"""Lowering of the causal attention ops (attention.py) to the dialect's
`zshard.causal_attention` and `zshard.causal_attention_grad`
(docs/attention.md): one op each, operands copied once if they are pending
views ([B, T, H, D] transposed to [B, H, T, D]), no [T, T] tensor.
"""

import torch

from .attention import scale_f32
from .lower import op
from .mlir import Val


def _operands(L, *nodes):
    vals = [L.mat(L.get(n)) for n in nodes]
    for x in vals:
        if x.dt != "f32":  # attention.py matches f32 only
            L.fail(f"internal: {L.node.target} on {x.dt} (please report)")
    return vals


def _scale(scale):
    """The f32 attribute's value: 9 significant digits give it back exactly."""
    return "%.8e" % scale_f32(scale)


@op(torch.ops.zshard.causal_attention.default)
def _causal_attention(L, q, k, v, scale):
    q, k, v = _operands(L, q, k, v)
    text = (f"zshard.causal_attention {q.name}, {k.name}, {v.name} scale({_scale(scale)}) "
            f": {q.type}, {k.type}, {v.type}")
    out, lse = L.fn.op_results(text, L.loc, 2)
    return [Val(out, q.shape, "f32"), Val(lse, q.shape[:3], "f32")]


@op(torch.ops.zshard.causal_attention_grad.default)
def _causal_attention_grad(L, q, k, v, out, lse, dout, scale):
    vals = _operands(L, q, k, v, out, lse, dout)
    names = ", ".join(x.name for x in vals)
    types = ", ".join(x.type for x in vals)
    text = f"zshard.causal_attention_grad {names} scale({_scale(scale)}) : {types}"
    dq, dk, dv = L.fn.op_results(text, L.loc, 3)
    return [Val(dq, vals[0].shape, "f32"), Val(dk, vals[1].shape, "f32"),
            Val(dv, vals[2].shape, "f32")]
