"""Operators of the reference, each with a hand-written backward.

Every ``*_forward`` returns ``(output, cache)`` and the matching ``*_backward``
takes the gradient of the output and that cache and returns the gradients of the
inputs. All arithmetic happens in the floating dtype of the inputs: float32
inputs give float32 results (as the compiled step computes), float64 inputs give
float64 results (as the finite-difference tests use). Constants are cast to that
dtype first so that no operation silently widens to float64.

The mathematics is the one of ``docs/models.md``.
"""

import numpy as np

LAYERNORM_EPS = 1e-5
GELU_C = float(np.sqrt(2.0 / np.pi))
GELU_K = 0.044715


def _c(like, value):
    """``value`` as a scalar of the dtype of ``like``."""
    return np.asarray(like).dtype.type(value)


# --------------------------------------------------------------------------- #
# Embedding gather: out[...] = table[idx[...]]
# --------------------------------------------------------------------------- #

def embedding_forward(table, idx):
    """``table : [V, D]``, ``idx`` integer of any shape -> ``[*idx.shape, D]``."""
    idx = np.asarray(idx)
    if not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"embedding indices must be integers, got {idx.dtype}")
    if idx.size and (idx.min() < 0 or idx.max() >= table.shape[0]):
        raise ValueError(
            f"embedding index out of range [0, {table.shape[0]}): "
            f"min {idx.min()}, max {idx.max()}")
    return table[idx], (idx, table.shape, table.dtype)


def embedding_backward(dout, cache):
    """Scatter-add of ``dout`` rows into a zero table (repeated indices sum)."""
    idx, shape, dtype = cache
    dtable = np.zeros(shape, dtype=dtype)
    np.add.at(dtable, idx.reshape(-1), dout.reshape(-1, shape[1]))
    return dtable


# --------------------------------------------------------------------------- #
# Matrix product with shared leading (batch) dimensions: out = a @ b
# --------------------------------------------------------------------------- #

def matmul_forward(a, b):
    """``a : [..., M, K]``, ``b : [..., K, N]`` -> ``[..., M, N]``."""
    return a @ b, (a, b)


def matmul_backward(dout, cache):
    a, b = cache
    da = dout @ np.swapaxes(b, -1, -2)
    db = np.swapaxes(a, -1, -2) @ dout
    # A 2-D b used with batched a: sum its gradient over the batch dimensions.
    if db.ndim > b.ndim:
        db = db.reshape(-1, *b.shape).sum(axis=0)
    return da, db


# --------------------------------------------------------------------------- #
# Linear layer: y = x @ W + b with W : [in, out]
# --------------------------------------------------------------------------- #

def linear_forward(x, w, b=None):
    """``x : [..., in]``, ``w : [in, out]``, ``b : [out]`` or None."""
    y = x @ w
    if b is not None:
        y = y + b
    return y, (x, w, b is not None)


def linear_backward(dy, cache):
    """Returns ``(dx, dw, db)``; ``db`` is None when the layer has no bias."""
    x, w, has_bias = cache
    dx = dy @ w.T
    x2 = x.reshape(-1, x.shape[-1])
    dy2 = dy.reshape(-1, dy.shape[-1])
    dw = x2.T @ dy2
    db = dy2.sum(axis=0) if has_bias else None
    return dx, dw, db


# --------------------------------------------------------------------------- #
# LayerNorm over the last axis, biased variance, eps inside the square root
# --------------------------------------------------------------------------- #

def layernorm_forward(x, w, b, eps=LAYERNORM_EPS):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=-1, keepdims=True)
    rstd = _c(x, 1.0) / np.sqrt(var + _c(x, eps))
    xhat = xc * rstd
    return xhat * w + b, (xhat, rstd, w)


def layernorm_backward(dy, cache):
    """Returns ``(dx, dw, db)``."""
    xhat, rstd, w = cache
    n = xhat.shape[-1]
    dxhat = dy * w
    mean_dxhat = dxhat.sum(axis=-1, keepdims=True) / _c(xhat, n)
    mean_dxhat_xhat = (dxhat * xhat).sum(axis=-1, keepdims=True) / _c(xhat, n)
    dx = rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat)
    dy2 = dy.reshape(-1, n)
    dw = (dy2 * xhat.reshape(-1, n)).sum(axis=0)
    db = dy2.sum(axis=0)
    return dx, dw, db


# --------------------------------------------------------------------------- #
# GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
# --------------------------------------------------------------------------- #

def gelu_forward(x):
    c, k = _c(x, GELU_C), _c(x, GELU_K)
    t = np.tanh(c * (x + k * x * x * x))
    return _c(x, 0.5) * x * (_c(x, 1.0) + t), (x, t)


def gelu_backward(dy, cache):
    x, t = cache
    c, k = _c(x, GELU_C), _c(x, GELU_K)
    half, one = _c(x, 0.5), _c(x, 1.0)
    dudx = c * (one + _c(x, 3.0) * k * x * x)
    return dy * (half * (one + t) + half * x * (one - t * t) * dudx)


# --------------------------------------------------------------------------- #
# Causal multi-head softmax attention on the fused qkv projection
# --------------------------------------------------------------------------- #

def split_heads(x, n_head):
    """``[B, T, D] -> [B, H, T, D/H]``; head h takes columns h*D/H .. (h+1)*D/H."""
    bsz, t, d = x.shape
    return x.reshape(bsz, t, n_head, d // n_head).transpose(0, 2, 1, 3)


def merge_heads(x):
    """``[B, H, T, D/H] -> [B, T, D]``, the inverse of :func:`split_heads`."""
    bsz, h, t, dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(bsz, t, h * dh)


def causal_attention_forward(qkv, n_head):
    """``qkv : [B, T, 3D]`` (q, k, v in that order) -> ``o : [B, T, D]``.

    ``s = q @ k^T / sqrt(D/H)`` with ``s[t, u] = -inf`` for ``u > t``,
    ``p = softmax(s over u)``, ``o = p @ v``, heads concatenated back.
    """
    bsz, t, d3 = qkv.shape
    if d3 % 3 or (d3 // 3) % n_head:
        raise ValueError(f"qkv width {d3} is not 3 * a multiple of {n_head} heads")
    d = d3 // 3
    q = split_heads(qkv[..., 0:d], n_head)
    k = split_heads(qkv[..., d:2 * d], n_head)
    v = split_heads(qkv[..., 2 * d:3 * d], n_head)
    scale = np.sqrt(_c(qkv, d // n_head))
    s = (q @ np.swapaxes(k, -1, -2)) / scale
    future = np.triu(np.ones((t, t), dtype=bool), k=1)  # u > t
    s = np.where(future, _c(qkv, -np.inf), s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    o = p @ v
    return merge_heads(o), (q, k, v, p, scale)


def causal_attention_backward(dout, cache):
    """Returns ``dqkv : [B, T, 3D]``."""
    q, k, v, p, scale = cache
    n_head = q.shape[1]
    do = split_heads(dout, n_head)
    dv = np.swapaxes(p, -1, -2) @ do
    dp = do @ np.swapaxes(v, -1, -2)
    # Softmax backward; masked entries have p = 0 and so get ds = 0.
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) / scale
    dq = ds @ k
    dk = np.swapaxes(ds, -1, -2) @ q
    return np.concatenate([merge_heads(dq), merge_heads(dk), merge_heads(dv)],
                          axis=-1)


# --------------------------------------------------------------------------- #
# Losses (scalar outputs; backward takes the scalar gradient, default 1)
# --------------------------------------------------------------------------- #

def cross_entropy_forward(logits, labels):
    """``logits : [N, C]``, ``labels : [N]`` integer in ``[0, C)``.

    ``loss = mean_n(logsumexp(logits[n]) - logits[n, labels[n]])``.
    """
    labels = np.asarray(labels)
    n, c = logits.shape
    if labels.shape != (n,):
        raise ValueError(f"labels shape {labels.shape} does not match logits {logits.shape}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must be integers, got {labels.dtype}")
    if n and (labels.min() < 0 or labels.max() >= c):
        raise ValueError(f"label out of range [0, {c}): min {labels.min()}, max {labels.max()}")
    mx = logits.max(axis=-1, keepdims=True)
    e = np.exp(logits - mx)
    se = e.sum(axis=-1, keepdims=True)
    lse = (mx + np.log(se))[:, 0]
    rows = np.arange(n)
    loss = (lse - logits[rows, labels]).mean()
    return loss, (e / se, labels)


def cross_entropy_backward(dloss, cache):
    prob, labels = cache
    n = prob.shape[0]
    dlogits = prob.copy()
    dlogits[np.arange(n), labels] -= _c(prob, 1.0)
    return dlogits * (_c(prob, dloss) / _c(prob, n))


def mse_forward(y, target):
    """``loss = mean((y - target)^2)`` over all elements."""
    if y.shape != target.shape:
        raise ValueError(f"target shape {target.shape} does not match output {y.shape}")
    diff = y - target
    return (diff * diff).mean(), (diff,)


def mse_backward(dloss, cache):
    """Returns the gradient with respect to ``y`` (that of ``target`` is its negation)."""
    (diff,) = cache
    return diff * (_c(diff, 2.0) * _c(diff, dloss) / _c(diff, diff.size))
