"""The ``mlp`` model of docs/models.md: forward, backward and parameter table."""

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from . import ops

LOSSES = ("mse", "xent")


@dataclass(frozen=True)
class MlpConfig:
    """``widths`` are ``d_0 .. d_L`` (L >= 1 layers); ``loss`` is mse or xent."""

    widths: Tuple[int, ...]
    loss: str = "mse"

    def __post_init__(self):
        object.__setattr__(self, "widths", tuple(int(w) for w in self.widths))
        if len(self.widths) < 2 or min(self.widths) < 1:
            raise ValueError(f"mlp needs at least two positive widths, got {self.widths}")
        if self.loss not in LOSSES:
            raise ValueError(f"mlp loss must be one of {LOSSES}, got {self.loss!r}")

    @property
    def layers(self):
        return len(self.widths) - 1


def param_specs(cfg):
    """``[(name, shape, init)]`` in the table order of docs/models.md."""
    specs = []
    for i in range(cfg.layers):
        specs.append((f"fc.{i}.weight", (cfg.widths[i], cfg.widths[i + 1]), "normal"))
        specs.append((f"fc.{i}.bias", (cfg.widths[i + 1],), "zeros"))
    return specs


def batch_specs(cfg, batch_size):
    """``{name: (shape, kind)}`` of the batch inputs; kind is 'float' or 'int'."""
    specs = {"x": ((batch_size, cfg.widths[0]), "float")}
    if cfg.loss == "mse":
        specs["target"] = ((batch_size, cfg.widths[-1]), "float")
    else:
        specs["labels"] = ((batch_size,), "int")
    return specs


def forward(cfg, params, batch):
    """Returns ``(loss, cache)``; everything in the dtype of ``params``."""
    h = batch["x"]
    caches = []
    for i in range(cfg.layers):
        y, c_lin = ops.linear_forward(h, params[f"fc.{i}.weight"], params[f"fc.{i}.bias"])
        if i < cfg.layers - 1:
            h, c_act = ops.gelu_forward(y)
        else:
            h, c_act = y, None
        caches.append((c_lin, c_act))
    if cfg.loss == "mse":
        loss, c_loss = ops.mse_forward(h, batch["target"])
    else:
        loss, c_loss = ops.cross_entropy_forward(h, batch["labels"])
    return loss, (caches, c_loss)


def backward(cfg, cache):
    """Gradient of the loss with respect to every parameter."""
    caches, c_loss = cache
    if cfg.loss == "mse":
        dh = ops.mse_backward(1.0, c_loss)
    else:
        dh = ops.cross_entropy_backward(1.0, c_loss)
    grads = {}
    for i in reversed(range(cfg.layers)):
        c_lin, c_act = caches[i]
        dy = dh if c_act is None else ops.gelu_backward(dh, c_act)
        dh, grads[f"fc.{i}.weight"], grads[f"fc.{i}.bias"] = ops.linear_backward(dy, c_lin)
    return grads


def loss_and_grads(cfg, params, batch):
    loss, cache = forward(cfg, params, batch)
    return loss, backward(cfg, cache)


def cast_batch(cfg, batch, dtype):
    out = {"x": np.asarray(batch["x"], dtype=dtype)}
    if cfg.loss == "mse":
        out["target"] = np.asarray(batch["target"], dtype=dtype)
    else:
        out["labels"] = np.asarray(batch["labels"]).astype(np.int64)
    return out
