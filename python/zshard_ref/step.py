"""The training step: loss, gradients and the AdamW update, for either model."""

import numpy as np

from . import gpt, llama, mlp
from .adamw import AdamWConfig, adamw_step


def _model(cfg):
    if isinstance(cfg, gpt.GptConfig):
        return gpt
    if isinstance(cfg, mlp.MlpConfig):
        return mlp
    if isinstance(cfg, llama.LlamaConfig):
        return llama
    raise TypeError(f"unknown model config {cfg!r}")


def param_specs(cfg):
    """``[(name, shape, init)]`` in the order of the table in docs/models.md;
    init is 'normal' (normal(0, 0.02)), 'ones' or 'zeros'."""
    return _model(cfg).param_specs(cfg)


def init_params(cfg, seed, dtype=np.float32):
    """Random parameters as the table says, drawn from
    ``numpy.random.default_rng(seed)`` in table order (normal ones only draw)."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape, init in param_specs(cfg):
        if init == "normal":
            params[name] = rng.normal(0.0, 0.02, size=shape).astype(dtype)
        elif init == "ones":
            params[name] = np.ones(shape, dtype=dtype)
        else:
            params[name] = np.zeros(shape, dtype=dtype)
    return params


def check_params(cfg, params):
    """Raise ValueError unless ``params`` has exactly the model's names and shapes."""
    specs = {name: shape for name, shape, _ in param_specs(cfg)}
    missing = [n for n in specs if n not in params]
    extra = sorted(n for n in params if n not in specs)
    if missing or extra:
        raise ValueError(f"parameters do not match the model: missing {missing[:6]}, "
                         f"unexpected {extra[:6]}")
    for name, shape in specs.items():
        if np.shape(params[name]) != tuple(shape):
            raise ValueError(f"parameter {name!r} has shape {list(np.shape(params[name]))}, "
                             f"expected {list(shape)}")


def check_batch(cfg, batch):
    """Raise ValueError unless the batch has the model's inputs, shapes and kinds."""
    if isinstance(cfg, (gpt.GptConfig, llama.LlamaConfig)):
        kind = "gpt" if isinstance(cfg, gpt.GptConfig) else "llama"
        if "tokens" not in batch:
            raise ValueError(f"{kind} batch needs 'tokens' and 'targets'")
        shape = np.shape(batch["tokens"])
        if len(shape) != 2:
            raise ValueError(f"{kind} 'tokens' must be [B, T], got {list(shape)}")
        specs = _model(cfg).batch_specs(cfg, shape[0], shape[1])
        if shape[1] > cfg.seq:
            raise ValueError(f"{kind} batch length {shape[1]} exceeds --seq {cfg.seq}")
    else:
        if "x" not in batch:
            raise ValueError("mlp batch needs 'x'")
        specs = mlp.batch_specs(cfg, np.shape(batch["x"])[0] if np.ndim(batch["x"]) else 0)
    for name, (shape, kind) in specs.items():
        if name not in batch:
            raise ValueError(f"batch is missing {name!r}")
        arr = np.asarray(batch[name])
        if arr.shape != tuple(shape):
            raise ValueError(f"batch {name!r} has shape {list(arr.shape)}, expected {list(shape)}")
        if kind == "int" and not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"batch {name!r} must be integer, got {arr.dtype}")
        if kind == "float" and not np.issubdtype(arr.dtype, np.floating):
            raise ValueError(f"batch {name!r} must be floating point, got {arr.dtype}")
    extra = sorted(set(batch) - set(specs))
    if extra:
        raise ValueError(f"batch has unexpected inputs {extra}")


def loss_and_grads(cfg, params, batch, dtype=np.float32):
    """Loss and the gradient of every parameter, computed in ``dtype``."""
    model = _model(cfg)
    check_params(cfg, params)
    check_batch(cfg, batch)
    p = {name: np.asarray(params[name], dtype=dtype) for name, _, _ in param_specs(cfg)}
    return model.loss_and_grads(cfg, p, model.cast_batch(cfg, batch, dtype))


def train_step(model_cfg, params, opt_state, batch, lr, step, adamw=AdamWConfig(),
               dtype=np.float32, max_grad_norm=0.0):
    """One training step per docs/models.md.

    ``params``: ``{name: array}``; ``opt_state``: ``{name.exp_avg, name.exp_avg_sq:
    array}`` or None/empty for zero moments; ``batch``: ``{tokens, targets}`` (gpt)
    or ``{x, target}`` / ``{x, labels}`` (mlp); ``step`` is 1 for the first update.
    Returns ``(loss, new_params, new_opt_state)``, all in ``dtype``; the loss is
    that of the incoming parameters. ``max_grad_norm > 0`` clips the global
    gradient norm before the update.
    """
    loss, grads = loss_and_grads(model_cfg, params, batch, dtype)
    ordered = {name: params[name] for name, _, _ in param_specs(model_cfg)}
    new_params, new_state = adamw_step(ordered, grads, opt_state, lr, step, adamw, dtype,
                                       max_grad_norm)
    return loss, new_params, new_state
