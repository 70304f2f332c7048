"""The model's torch ``state_dict`` as the step records it.

zshard-run's ``--save-torch F`` writes a file that
``model.load_state_dict(safetensors.torch.load_file(F), strict=True)`` loads:
exactly the module's ``state_dict`` keys, in their dtypes and shapes. The step
itself knows only its parameters (a tied weight is one parameter, the first
name ``named_parameters()`` gives it) and buffer arguments, and folds the other
buffers into constants, so the
exporter records the mapping in the module attribute
``zshard.torch_state_dict`` (which zshard-compile copies into the manifest's
``module`` section): a JSON list, in ``state_dict`` order, of

- ``{"name", "dtype", "shape", "param"}``: a key held by step parameter
  ``param`` (itself, or the parameter a tied key such as GPT-2's
  ``lm_head.weight`` shares its storage with), or by the step's buffer
  argument of its own name (a persistent float32 buffer);
- ``{"name", "dtype", "shape", "data"}``: a persistent buffer folded into the
  step, with its exact bytes (little-endian hex), so the file still holds it.

dtypes are safetensors' names (``F32``, ``BF16``, ``I64``, ...).
"""

import json

import torch

from .errors import ExportError

ATTR = "zshard.torch_state_dict"

# torch dtype -> safetensors dtype name
_ST_DTYPES = {
    torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL",
}


def _dtype(name, t):
    dt = _ST_DTYPES.get(t.dtype)
    if dt is None:
        raise ExportError(f"state_dict entry '{name}' is {t.dtype}, which a safetensors "
                          f"checkpoint cannot hold")
    return dt


def state_dict_layout(model, params, buffers, buffer_args=None):
    """The list recorded in ATTR: every key of model.state_dict(), in order.

    params: {name: Parameter} of the step's parameters.
    buffers: {name: tensor} of the persistent buffers folded into the step.
    buffer_args: {name: tensor} of the persistent buffers that are buffer
      arguments of the step (recorded as held by the argument of their name).
    A key held by neither is refused (an exporter bug or an unusual module).
    """
    by_id = {id(p): n for n, p in params.items()}
    entries = []
    for name, t in model.state_dict(keep_vars=True).items():
        entry = {"name": name, "dtype": _dtype(name, t), "shape": [int(s) for s in t.shape]}
        if name in params or name in (buffer_args or {}):
            entry["param"] = name
        elif id(t) in by_id:  # a tied weight: the same Parameter under another name
            entry["param"] = by_id[id(t)]
        elif name in buffers:
            a = buffers[name].detach().cpu().contiguous()
            if a.dtype == torch.bfloat16:
                data = a.view(torch.int16).numpy().astype("<i2").tobytes()
            else:
                np_a = a.numpy()
                data = np_a.astype(np_a.dtype.newbyteorder("<"), copy=False).tobytes()
            entry["data"] = data.hex()
        else:
            raise ExportError(f"state_dict entry '{name}' is neither a parameter of the step, "
                              f"a weight tied to one, nor a buffer folded into it")
        entries.append(entry)
    return entries


def attribute_text(entries):
    """The MLIR string attribute literal of the layout (JSON, escaped)."""
    text = json.dumps(entries, separators=(",", ":"))
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
