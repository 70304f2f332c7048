"""Tensors of the step that are not trained: folded to constants.

A module's non-persistent buffers (``register_buffer(..., persistent=False)``:
not in its ``state_dict``, recomputed from the configuration when the module is
built, as Hugging Face's RoPE ``inv_freq``) and the tensor constants the trace
captures (``_tensor_constantN``: a ``torch.tensor([...])`` in the forward, a
tensor attribute that is neither a parameter nor a buffer, the empty tensor a
key/value cache starts from) are derived: the step reads the same values every
time, as torch's eager loop does. They enter the step as ``arith.constant``
tensors with their exact bits. Persistent float32 buffers (at least 1-d) are
state a checkpoint holds: they enter the step as ``buffer`` arguments
(docs/contract.md), which zshard-run initialises from the exported weights and
checkpoints; other persistent buffers (integer, bool, 0-d) are folded as the
derived ones and recorded with their bytes (state_dict.py).
"""

import struct

import torch

from .errors import ExportError
from .mlir import DTYPES, Val, ttype

# The largest constant folded into the step's text (elements): a causal mask
# of a 1024-token context is 1M booleans.
MAX_ELEMENTS = 1 << 20


def folded_buffers(model):
    """({name: tensor} of all the model's buffers, in named_buffers() order;
    the set of the persistent ones, which its state_dict holds and
    zshard-run's --save-torch writes back)."""
    in_state_dict = set(model.state_dict(keep_vars=True))
    buffers = dict(model.named_buffers())
    return buffers, {name for name in buffers if name in in_state_dict}


def is_buffer_argument(t):
    """Whether a persistent buffer enters the step as a `buffer` argument
    (float32, at least 1-d) rather than folded to a constant."""
    return t.dtype == torch.float32 and t.dim() > 0


def persistent_buffer_error(model, name, op):
    """The error for a persistent buffer the step changes (BatchNorm's
    running statistics in training mode)."""
    buf = model.get_buffer(name)
    owner = name.rpartition(".")[0]
    mod = model.get_submodule(owner) if owner else model
    return ExportError(
        f"the model has a persistent buffer '{name}' (shape {list(buf.shape)}, "
        f"{_dtype_name(buf)}) in module '{owner}' ({type(mod).__name__}) that the step "
        f"changes ({op}): it is state the training step would carry, and only buffers "
        f"the step reads are folded into it; export the module in eval mode if its "
        f"statistics stay fixed, or make it a parameter")


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def dense_literal(t):
    """The `dense<...>` attribute of a tensor's exact values, or None for a
    dtype the step has no element type for."""
    dt = DTYPES.get(t.dtype)
    if dt is None:
        return None
    a = t.detach().cpu().contiguous()
    flat = a.reshape(-1)
    if flat.numel() and bool((flat == flat[0]).all()):
        return f"dense<{_scalar_text(flat[0], dt)}>"
    if flat.numel() == 0:
        return "dense<>" if a.dim() else None
    if dt == "i1":  # one byte per element in MLIR's hex form is not i1's layout
        return "dense<" + _nested(a.tolist(), lambda v: "true" if v else "false") + ">"
    data = a.numpy().astype(a.numpy().dtype.newbyteorder("<"), copy=False).tobytes()
    return 'dense<"0x' + data.hex().upper() + '">'


def _scalar_text(v, dt):
    if dt == "i1":
        return "true" if bool(v) else "false"
    if dt == "f32":
        return "0x%08X" % struct.unpack("<I", struct.pack("<f", float(v)))[0]
    if dt == "f64":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(v)))[0]
    return str(int(v))


def _nested(x, leaf):
    if isinstance(x, list):
        return "[" + ", ".join(_nested(v, leaf) for v in x) + "]"
    return leaf(x)


def fold(fn, t, what, loc, fail):
    """An `arith.constant` Val holding tensor t. `fail(why, hint)` reports a
    tensor that cannot be folded (a dtype without an element type, too big)."""
    if t.is_complex() or t.dtype not in DTYPES:
        fail(f"unsupported tensor constant {what} of dtype {_dtype_name(t)}",
             "the step's element types are f32, f64, i64, i32, i16, i8 and i1")
    if t.numel() > MAX_ELEMENTS:
        fail(f"tensor constant {what} (shape {list(t.shape)}) is too large to fold into the "
             f"step ({t.numel()} elements, at most {MAX_ELEMENTS})",
             "compute it in the forward from the inputs (torch.arange, comparisons)")
    dt = DTYPES[t.dtype]
    shape = tuple(int(s) for s in t.shape)
    if t.numel() == 0:
        return fn.empty(shape, dt, loc)
    name = fn.op(f"arith.constant {dense_literal(t)} : {ttype(shape, dt)}", loc, "k")
    return Val(name, shape, dt)


def fold_buffer(fn, name, t):
    """A derived buffer as a constant, located at its module's path."""
    owner = name.rpartition(".")[0]

    def fail(why, hint=""):
        raise ExportError(f"{why} in module '{owner}'" + (f": {hint}" if hint else ""))
    return fold(fn, t, f"buffer '{name}'", owner, fail)
