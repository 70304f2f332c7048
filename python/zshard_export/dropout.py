"""Refuses dropout with p > 0 while the step is traced, naming it.

An exported step is deterministic (the contract has no random state), so a
dropout that is active would otherwise surface as an unsupported random op
deep in the graph (`aten.empty_permuted`, `aten.bernoulli`). A torch function
mode sees every dropout call with its arguments and refuses the active ones
with the module that made them.
"""

import traceback

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from .errors import ExportError, user_frame


def _table():
    """func -> (p name, p position, p default, training name, position, default)."""
    table = {}
    for name in ("dropout", "dropout1d", "dropout2d", "dropout3d"):
        if hasattr(F, name):
            table[getattr(F, name)] = ("p", 1, 0.5, "training", 2, True)
    for name in ("alpha_dropout", "feature_alpha_dropout"):
        if hasattr(F, name):
            table[getattr(F, name)] = ("p", 1, 0.5, "training", 2, False)
    for name in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout",
                 "native_dropout"):
        if hasattr(torch, name):
            table[getattr(torch, name)] = ("p", 1, 0.0, "train", 2, True)
    table[F.scaled_dot_product_attention] = ("dropout_p", 4, 0.0, None, None, True)
    table[F.multi_head_attention_forward] = ("dropout_p", 10, 0.0, "training", 13, True)
    return table


_DROPOUT = _table()


def _arg(args, kwargs, name, pos, default):
    if name in kwargs:
        return kwargs[name]
    return args[pos] if pos is not None and len(args) > pos else default


class DropoutGuard(TorchFunctionMode):
    """Raises ExportError at the first dropout call with p > 0 in training.

    where() -> (module path, module) of the running forward.
    """

    def __init__(self, where):
        super().__init__()
        self.where = where

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        spec = _DROPOUT.get(func)
        if spec is not None:
            p_name, p_pos, p_default, t_name, t_pos, t_default = spec
            p = _arg(args, kwargs, p_name, p_pos, p_default)
            training = True if t_name is None else _arg(args, kwargs, t_name, t_pos, t_default)
            if isinstance(p, (int, float)) and p > 0 and training:
                self._refuse(func, p_name, p)
        return func(*args, **kwargs)

    def _refuse(self, func, p_name, p):
        path, module = self.where()
        cls = type(module).__name__ if module is not None else "?"
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            what = f"nn.{cls}(p={p:g})"
        else:
            what = f"{_func_name(func)}({p_name}={p:g})"
        frame = user_frame(traceback.extract_stack()[:-2])
        at = f" at {frame}" if frame else ""
        raise ExportError(
            f"dropout {what} in module '{path}' ({cls}): dropout is random and an "
            f"exported step is deterministic; set {p_name}=0, or export the model in eval "
            f"mode (model.eval(): dropout is the identity){at}")


def _func_name(func):
    if getattr(F, func.__name__, None) is func:
        return f"F.{func.__name__}"
    return f"torch.{func.__name__}"
