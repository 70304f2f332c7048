"""The ``llama`` model of docs/models.md (a Hugging Face Llama decoder):
RMSNorm, rotary position embeddings (rotate-half), grouped-query causal
attention, SwiGLU MLP, untied head, no biases. Forward, hand-written backward
and parameter table; names and shapes are those of a LlamaForCausalLM
state_dict (linear weights ``[out, in]``, ``y = x @ W^T``)."""

from dataclasses import dataclass

import numpy as np

from . import ops
from .gpt import batch_specs, cast_batch  # noqa: F401  (the inputs are gpt's)

RMS_EPS = 1e-5


@dataclass(frozen=True)
class LlamaConfig:
    layers: int
    d_model: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    seq: int
    rope_theta: float = 10000.0

    def __post_init__(self):
        for name in ("layers", "d_model", "heads", "kv_heads", "ffn_hidden", "vocab", "seq"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"llama {name} must be positive, got {getattr(self, name)}")
        if self.d_model % self.heads:
            raise ValueError(f"llama d_model {self.d_model} is not a multiple of heads {self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"llama heads {self.heads} is not a multiple of kv_heads "
                             f"{self.kv_heads}")
        if (self.d_model // self.heads) % 2:
            raise ValueError("llama head dim must be even for the rotary embeddings")

    @property
    def head_dim(self):
        return self.d_model // self.heads


def param_specs(cfg):
    """``[(name, shape, init)]`` in the order of a LlamaForCausalLM state_dict."""
    d, f, hd = cfg.d_model, cfg.ffn_hidden, cfg.head_dim
    specs = [("model.embed_tokens.weight", (cfg.vocab, d), "normal")]
    for i in range(cfg.layers):
        p = f"model.layers.{i}."
        specs += [
            (p + "self_attn.q_proj.weight", (cfg.heads * hd, d), "normal"),
            (p + "self_attn.k_proj.weight", (cfg.kv_heads * hd, d), "normal"),
            (p + "self_attn.v_proj.weight", (cfg.kv_heads * hd, d), "normal"),
            (p + "self_attn.o_proj.weight", (d, cfg.heads * hd), "normal"),
            (p + "mlp.gate_proj.weight", (f, d), "normal"),
            (p + "mlp.up_proj.weight", (f, d), "normal"),
            (p + "mlp.down_proj.weight", (d, f), "normal"),
            (p + "input_layernorm.weight", (d,), "ones"),
            (p + "post_attention_layernorm.weight", (d,), "ones"),
        ]
    specs += [("model.norm.weight", (d,), "ones"), ("lm_head.weight", (cfg.vocab, d), "normal")]
    return specs


# --------------------------------------------------------------------------- #
# Layers
# --------------------------------------------------------------------------- #

def rmsnorm_forward(x, w, eps=RMS_EPS):
    rstd = ops._c(x, 1.0) / np.sqrt((x * x).mean(axis=-1, keepdims=True) + ops._c(x, eps))
    xhat = x * rstd
    return xhat * w, (xhat, rstd, w)


def rmsnorm_backward(dy, cache):
    """Returns ``(dx, dw)``."""
    xhat, rstd, w = cache
    n = xhat.shape[-1]
    dxhat = dy * w
    dx = rstd * (dxhat - xhat * ((dxhat * xhat).sum(axis=-1, keepdims=True) / ops._c(xhat, n)))
    dw = (dy * xhat).reshape(-1, n).sum(axis=0)
    return dx, dw


def swiglu_forward(gate, up):
    s = ops._c(gate, 1.0) / (ops._c(gate, 1.0) + np.exp(-gate))
    return gate * s * up, (gate, up, s)


def swiglu_backward(dh, cache):
    gate, up, s = cache
    one = ops._c(gate, 1.0)
    dgate = dh * up * s * (one + gate * (one - s))
    return dgate, dh * gate * s


def rope_tables(seq, head_dim, theta, dtype):
    """cos, sin ``[T, hd]`` (each half repeated), angle ``t * theta^(-2j/hd)``."""
    inv = 1.0 / (float(theta) ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim))
    ang = np.arange(seq, dtype=np.float64)[:, None] * inv[None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    return np.cos(ang).astype(dtype), np.sin(ang).astype(dtype)


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def rope_forward(x, cos, sin):
    """``x : [B, H, T, hd]`` -> ``x cos + rotate_half(x) sin``."""
    return x * cos + rotate_half(x) * sin


def rope_backward(dy, cos, sin):
    """The transpose of the rotation: ``dy cos - rotate_half(dy sin)``
    (``rotate_half`` is antisymmetric: its transpose is its negation)."""
    return dy * cos - rotate_half(dy * sin)


def gqa_forward(q, k, v, cfg, cos, sin):
    """``q : [B, T, H*hd]``, ``k, v : [B, T, KV*hd]`` -> ``[B, T, H*hd]``."""
    group = cfg.heads // cfg.kv_heads
    qh = rope_forward(ops.split_heads(q, cfg.heads), cos, sin)
    kh = rope_forward(ops.split_heads(k, cfg.kv_heads), cos, sin)
    vh = ops.split_heads(v, cfg.kv_heads)
    kr, vr = np.repeat(kh, group, axis=1), np.repeat(vh, group, axis=1)
    t = q.shape[1]
    scale = np.sqrt(ops._c(q, cfg.head_dim))
    s = (qh @ np.swapaxes(kr, -1, -2)) / scale
    s = np.where(np.triu(np.ones((t, t), dtype=bool), k=1), ops._c(q, -np.inf), s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return ops.merge_heads(p @ vr), (qh, kr, vr, p, scale, group, cos, sin)


def gqa_backward(dout, cache, cfg):
    qh, kr, vr, p, scale, group, cos, sin = cache
    do = ops.split_heads(dout, cfg.heads)
    dvr = np.swapaxes(p, -1, -2) @ do
    dp = do @ np.swapaxes(vr, -1, -2)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) / scale
    dqh = ds @ kr
    dkr = np.swapaxes(ds, -1, -2) @ qh

    def fold(x):  # [B, H, T, hd] -> [B, KV, T, hd], summing each group
        b, h, t, hd = x.shape
        return x.reshape(b, h // group, group, t, hd).sum(axis=2)

    dq = ops.merge_heads(rope_backward(dqh, cos, sin))
    dk = ops.merge_heads(rope_backward(fold(dkr), cos, sin))
    dv = ops.merge_heads(fold(dvr))
    return dq, dk, dv


def _lin(x, w):
    return x @ w.T


def _lin_back(dy, x, w):
    """``(dx, dW)`` of ``y = x @ W^T``."""
    n = x.shape[-1]
    return dy @ w, dy.reshape(-1, dy.shape[-1]).T @ x.reshape(-1, n)


# --------------------------------------------------------------------------- #
# Model
# --------------------------------------------------------------------------- #

def forward(cfg, params, batch):
    tokens, targets = batch["tokens"], batch["targets"]
    bsz, t = tokens.shape
    if t > cfg.seq:
        raise ValueError(f"sequence length {t} exceeds the model's {cfg.seq}")
    dtype = params["model.embed_tokens.weight"].dtype
    cos, sin = rope_tables(t, cfg.head_dim, cfg.rope_theta, dtype)
    x, c_emb = ops.embedding_forward(params["model.embed_tokens.weight"], tokens)
    layers = []
    for i in range(cfg.layers):
        p = f"model.layers.{i}."
        a, c_in = rmsnorm_forward(x, params[p + "input_layernorm.weight"])
        q = _lin(a, params[p + "self_attn.q_proj.weight"])
        k = _lin(a, params[p + "self_attn.k_proj.weight"])
        v = _lin(a, params[p + "self_attn.v_proj.weight"])
        o, c_att = gqa_forward(q, k, v, cfg, cos, sin)
        x = x + _lin(o, params[p + "self_attn.o_proj.weight"])
        m, c_post = rmsnorm_forward(x, params[p + "post_attention_layernorm.weight"])
        gate = _lin(m, params[p + "mlp.gate_proj.weight"])
        up = _lin(m, params[p + "mlp.up_proj.weight"])
        h, c_glu = swiglu_forward(gate, up)
        x = x + _lin(h, params[p + "mlp.down_proj.weight"])
        layers.append((a, c_in, o, c_att, m, c_post, h, c_glu))
    xf, c_norm = rmsnorm_forward(x, params["model.norm.weight"])
    logits = _lin(xf, params["lm_head.weight"])
    loss, c_loss = ops.cross_entropy_forward(logits.reshape(bsz * t, cfg.vocab),
                                             targets.reshape(bsz * t))
    return loss, (bsz, t, c_emb, layers, xf, c_norm, c_loss)


def backward(cfg, params, cache):
    bsz, t, c_emb, layers, xf, c_norm, c_loss = cache
    grads = {}
    dlogits = ops.cross_entropy_backward(1.0, c_loss).reshape(bsz, t, cfg.vocab)
    dxf, grads["lm_head.weight"] = _lin_back(dlogits, xf, params["lm_head.weight"])
    dx, grads["model.norm.weight"] = rmsnorm_backward(dxf, c_norm)
    for i in reversed(range(cfg.layers)):
        p = f"model.layers.{i}."
        a, c_in, o, c_att, m, c_post, h, c_glu = layers[i]
        dh, grads[p + "mlp.down_proj.weight"] = _lin_back(dx, h, params[p + "mlp.down_proj.weight"])
        dgate, dup = swiglu_backward(dh, c_glu)
        dm1, grads[p + "mlp.gate_proj.weight"] = _lin_back(dgate, m,
                                                           params[p + "mlp.gate_proj.weight"])
        dm2, grads[p + "mlp.up_proj.weight"] = _lin_back(dup, m, params[p + "mlp.up_proj.weight"])
        dxm, grads[p + "post_attention_layernorm.weight"] = rmsnorm_backward(dm1 + dm2, c_post)
        dx = dx + dxm
        do, grads[p + "self_attn.o_proj.weight"] = _lin_back(dx, o,
                                                             params[p + "self_attn.o_proj.weight"])
        dq, dk, dv = gqa_backward(do, c_att, cfg)
        da = np.zeros_like(a)
        for name, d in (("q_proj", dq), ("k_proj", dk), ("v_proj", dv)):
            dai, grads[p + f"self_attn.{name}.weight"] = _lin_back(
                d, a, params[p + f"self_attn.{name}.weight"])
            da = da + dai
        dxa, grads[p + "input_layernorm.weight"] = rmsnorm_backward(da, c_in)
        dx = dx + dxa
    grads["model.embed_tokens.weight"] = ops.embedding_backward(dx, c_emb)
    return grads


def loss_and_grads(cfg, params, batch):
    loss, cache = forward(cfg, params, batch)
    return loss, backward(cfg, params, cache)


def parameter_count(cfg):
    return sum(int(np.prod(shape)) for _, shape, _ in param_specs(cfg))
