"""The ``gpt`` model of docs/models.md (pre-LayerNorm GPT-2): forward, backward
and parameter table."""

from dataclasses import dataclass

import numpy as np

from . import ops


@dataclass(frozen=True)
class GptConfig:
    layers: int
    d_model: int
    heads: int
    vocab: int
    seq: int
    tied: bool = False

    def __post_init__(self):
        for name in ("layers", "d_model", "heads", "vocab", "seq"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"gpt {name} must be positive, got {getattr(self, name)}")
        if self.d_model % self.heads:
            raise ValueError(
                f"gpt d_model {self.d_model} is not a multiple of heads {self.heads}")


def param_specs(cfg):
    """``[(name, shape, init)]`` in the table order of docs/models.md."""
    d, v = cfg.d_model, cfg.vocab
    specs = [("wte", (v, d), "normal"), ("wpe", (cfg.seq, d), "normal")]
    for i in range(cfg.layers):
        p = f"h.{i}."
        specs += [
            (p + "ln_1.weight", (d,), "ones"),
            (p + "ln_1.bias", (d,), "zeros"),
            (p + "attn.c_attn.weight", (d, 3 * d), "normal"),
            (p + "attn.c_attn.bias", (3 * d,), "zeros"),
            (p + "attn.c_proj.weight", (d, d), "normal"),
            (p + "attn.c_proj.bias", (d,), "zeros"),
            (p + "ln_2.weight", (d,), "ones"),
            (p + "ln_2.bias", (d,), "zeros"),
            (p + "mlp.c_fc.weight", (d, 4 * d), "normal"),
            (p + "mlp.c_fc.bias", (4 * d,), "zeros"),
            (p + "mlp.c_proj.weight", (4 * d, d), "normal"),
            (p + "mlp.c_proj.bias", (d,), "zeros"),
        ]
    specs += [("ln_f.weight", (d,), "ones"), ("ln_f.bias", (d,), "zeros")]
    if not cfg.tied:
        specs.append(("lm_head.weight", (d, v), "normal"))
    return specs


def batch_specs(cfg, batch_size, seq_len=None):
    """``{name: (shape, kind)}`` of the batch inputs."""
    t = cfg.seq if seq_len is None else seq_len
    return {"tokens": ((batch_size, t), "int"), "targets": ((batch_size, t), "int")}


def forward(cfg, params, batch):
    """Returns ``(loss, cache)``; everything in the dtype of ``params``."""
    tokens, targets = batch["tokens"], batch["targets"]
    bsz, t = tokens.shape
    if t > cfg.seq:
        raise ValueError(f"sequence length {t} exceeds the model's {cfg.seq}")
    emb, c_wte = ops.embedding_forward(params["wte"], tokens)
    x = emb + params["wpe"][0:t]
    blocks = []
    for i in range(cfg.layers):
        p = f"h.{i}."
        a, c_ln1 = ops.layernorm_forward(x, params[p + "ln_1.weight"], params[p + "ln_1.bias"])
        qkv, c_qkv = ops.linear_forward(a, params[p + "attn.c_attn.weight"],
                                        params[p + "attn.c_attn.bias"])
        o, c_att = ops.causal_attention_forward(qkv, cfg.heads)
        y, c_aproj = ops.linear_forward(o, params[p + "attn.c_proj.weight"],
                                        params[p + "attn.c_proj.bias"])
        x = x + y
        m, c_ln2 = ops.layernorm_forward(x, params[p + "ln_2.weight"], params[p + "ln_2.bias"])
        f, c_fc = ops.linear_forward(m, params[p + "mlp.c_fc.weight"],
                                     params[p + "mlp.c_fc.bias"])
        g, c_gelu = ops.gelu_forward(f)
        y, c_mproj = ops.linear_forward(g, params[p + "mlp.c_proj.weight"],
                                        params[p + "mlp.c_proj.bias"])
        x = x + y
        blocks.append((c_ln1, c_qkv, c_att, c_aproj, c_ln2, c_fc, c_gelu, c_mproj))
    xf, c_lnf = ops.layernorm_forward(x, params["ln_f.weight"], params["ln_f.bias"])
    head = params["wte"].T if cfg.tied else params["lm_head.weight"]
    logits, c_head = ops.linear_forward(xf, head)
    loss, c_loss = ops.cross_entropy_forward(logits.reshape(bsz * t, cfg.vocab),
                                             targets.reshape(bsz * t))
    return loss, (bsz, t, c_wte, blocks, c_lnf, c_head, c_loss)


def backward(cfg, params, cache):
    """Gradient of the loss with respect to every parameter."""
    bsz, t, c_wte, blocks, c_lnf, c_head, c_loss = cache
    grads = {}
    dlogits = ops.cross_entropy_backward(1.0, c_loss).reshape(bsz, t, cfg.vocab)
    dxf, dhead, _ = ops.linear_backward(dlogits, c_head)
    dx, grads["ln_f.weight"], grads["ln_f.bias"] = ops.layernorm_backward(dxf, c_lnf)
    for i in reversed(range(cfg.layers)):
        p = f"h.{i}."
        c_ln1, c_qkv, c_att, c_aproj, c_ln2, c_fc, c_gelu, c_mproj = blocks[i]
        # x = x + mlp(ln_2(x))
        dg, grads[p + "mlp.c_proj.weight"], grads[p + "mlp.c_proj.bias"] = \
            ops.linear_backward(dx, c_mproj)
        df = ops.gelu_backward(dg, c_gelu)
        dm, grads[p + "mlp.c_fc.weight"], grads[p + "mlp.c_fc.bias"] = \
            ops.linear_backward(df, c_fc)
        dx_ln2, grads[p + "ln_2.weight"], grads[p + "ln_2.bias"] = \
            ops.layernorm_backward(dm, c_ln2)
        dx = dx + dx_ln2
        # x = x + attn(ln_1(x))
        do, grads[p + "attn.c_proj.weight"], grads[p + "attn.c_proj.bias"] = \
            ops.linear_backward(dx, c_aproj)
        dqkv = ops.causal_attention_backward(do, c_att)
        da, grads[p + "attn.c_attn.weight"], grads[p + "attn.c_attn.bias"] = \
            ops.linear_backward(dqkv, c_qkv)
        dx_ln1, grads[p + "ln_1.weight"], grads[p + "ln_1.bias"] = \
            ops.layernorm_backward(da, c_ln1)
        dx = dx + dx_ln1
    dwpe = np.zeros_like(params["wpe"])
    dwpe[0:t] = dx.sum(axis=0)
    grads["wpe"] = dwpe
    dwte = ops.embedding_backward(dx, c_wte)
    if cfg.tied:
        dwte = dwte + dhead.T  # embedding and LM-head contributions summed
    else:
        grads["lm_head.weight"] = dhead
    grads["wte"] = dwte
    return grads


def loss_and_grads(cfg, params, batch):
    loss, cache = forward(cfg, params, batch)
    return loss, backward(cfg, params, cache)


def cast_batch(cfg, batch, dtype):
    return {"tokens": np.asarray(batch["tokens"]).astype(np.int64),
            "targets": np.asarray(batch["targets"]).astype(np.int64)}
