"""Causal scaled dot-product attention as one op of the traced step.

While the step is traced, a torch function mode sees every call of
`F.scaled_dot_product_attention`. A call that is exactly the causal
attention `zshard.causal_attention` computes (docs/attention.md) is replaced
by the custom op `torch.ops.zshard.causal_attention`, whose autograd formula
is the custom op `torch.ops.zshard.causal_attention_grad`; lower_attention.py
prints them as the dialect's ops, so the step keeps no [B, H, T, T] tensor.
Every other call (a mask, dropout, non-f32, lengths or shapes the op does not
take) goes on to torch's math backend unchanged, as before.

The ops' eager implementations (dense, for checks and for calls outside a
trace) follow the dialect's definition: s = scale q k^T over u <= t,
lse = logsumexp(s), out = softmax(s) v; head h reads kv head h / (H / KV).
"""

import math
import struct

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

LIBRARY = "zshard"


def _repeat(x, groups):
    return x if groups == 1 else x.repeat_interleave(groups, dim=1)


def _scores(q, k, scale):
    """scale q k^T with -inf above the diagonal, in q's dtype."""
    t = q.shape[-2]
    s = torch.matmul(q, _repeat(k, q.shape[1] // k.shape[1]).transpose(-2, -1)) * scale
    above = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1)
    return s.masked_fill(above, float("-inf"))


@torch.library.custom_op(f"{LIBRARY}::causal_attention", mutates_args=())
def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    s = _scores(q, k, scale)
    lse = torch.logsumexp(s, dim=-1)
    out = torch.matmul(torch.exp(s - lse[..., None]), _repeat(v, q.shape[1] // v.shape[1]))
    return out.contiguous(), lse.contiguous()


@causal_attention.register_fake
def _(q, k, v, scale):
    return q.new_empty(q.shape), q.new_empty(q.shape[:3])


@torch.library.custom_op(f"{LIBRARY}::causal_attention_grad", mutates_args=())
def causal_attention_grad(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
                          lse: torch.Tensor, dout: torch.Tensor,
                          scale: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    groups = q.shape[1] // k.shape[1]
    p = torch.exp(_scores(q, k, scale) - lse[..., None])
    kr, vr = _repeat(k, groups), _repeat(v, groups)
    dv = torch.matmul(p.transpose(-2, -1), dout)
    delta = (dout * out).sum(-1, keepdim=True)
    ds = p * (torch.matmul(dout, vr.transpose(-2, -1)) - delta)
    dq = torch.matmul(ds, kr) * scale
    dk = torch.matmul(ds.transpose(-2, -1), q) * scale

    def fold(x):  # the gradient of a kv head sums over its group
        b, h, t, d = x.shape
        return x.reshape(b, h // groups, groups, t, d).sum(2)
    return dq, fold(dk).contiguous(), fold(dv).contiguous()


@causal_attention_grad.register_fake
def _(q, k, v, out, lse, dout, scale):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _setup_context(ctx, inputs, output):
    q, k, v, scale = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.scale = scale


def _backward(ctx, dout, dlse):
    # lse is an internal result: nothing of the model reads it (only this
    # backward), so its gradient is None or zeros.
    q, k, v, out, lse = ctx.saved_tensors
    dq, dk, dv = torch.ops.zshard.causal_attention_grad(q, k, v, out, lse, dout.contiguous(),
                                                        ctx.scale)
    return dq, dk, dv, None


causal_attention.register_autograd(_backward, setup_context=_setup_context)


# ------------------------------------------------------------ the matching

_NAMES = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
_DEFAULTS = {"attn_mask": None, "dropout_p": 0.0, "is_causal": False, "scale": None,
             "enable_gqa": False}


def sdpa_arguments(args, kwargs):
    """{name: value} of a scaled_dot_product_attention call, None if the call
    has arguments this does not know (torch would reject it anyway)."""
    if len(args) > len(_NAMES) or any(k not in _NAMES for k in kwargs):
        return None
    bound = dict(_DEFAULTS)
    bound.update(zip(_NAMES, args))
    bound.update(kwargs)
    return bound if all(n in bound for n in _NAMES[:3]) else None


def causal_scale(a):
    """The scale of a scaled_dot_product_attention call (arguments as
    sdpa_arguments gives them) that zshard.causal_attention computes
    exactly, or None when it is another attention (or in doubt)."""
    q, k, v = a["query"], a["key"], a["value"]
    if a["attn_mask"] is not None or a["is_causal"] is not True:
        return None
    p = a["dropout_p"]
    if not isinstance(p, (int, float)) or isinstance(p, bool) or p != 0:
        return None
    if not all(isinstance(x, torch.Tensor) and x.dtype == torch.float32 and x.dim() == 4
               and not x.is_nested for x in (q, k, v)):
        return None
    (b, h, t, d), (bk, kv, tk, dk) = q.shape, k.shape
    if tuple(v.shape) != tuple(k.shape) or (bk, tk, dk) != (b, t, d) or 0 in q.shape \
            or 0 in k.shape:
        return None  # broadcast batches, other lengths (sdpa aligns upper-left), Dv != D
    if kv != h and (a["enable_gqa"] is not True or h % kv):
        return None
    scale = a["scale"]
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    if not isinstance(scale, (int, float)) or isinstance(scale, bool):
        return None
    scale = float(scale)
    # The op's scale is an f32 attribute: take it only when f32 holds it as
    # a finite positive number.
    f32 = scale_f32(scale)
    if f32 is None or not (math.isfinite(f32) and f32 > 0):
        return None
    return scale


def scale_f32(x):
    """x rounded to f32 (the attribute's value), or None when out of range."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except (OverflowError, struct.error):
        return None


class CausalAttentionMode(TorchFunctionMode):
    """Replaces causal scaled_dot_product_attention by zshard.causal_attention."""

    def __init__(self):
        super().__init__()
        self.matched = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.scaled_dot_product_attention:
            a = sdpa_arguments(args, kwargs)
            scale = causal_scale(a) if a is not None else None
            if scale is not None:
                self.matched += 1
                out, _ = torch.ops.zshard.causal_attention(a["query"], a["key"], a["value"],
                                                           scale)
                return out
        return func(*args, **kwargs)
