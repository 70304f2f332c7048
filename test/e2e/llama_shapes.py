"""The published Llama shapes and what the paper-scale tests expect of them.

Independent of zshard-gen: the shapes are those of the checkpoints'
config.json (Llama-2-7B, Llama-2-70B, Llama-3-8B), and the parameter count
is written from the LlamaForCausalLM state_dict (embedding, per layer q, k,
v, o, gate, up, down and two RMSNorm weights, final norm, untied head).

Every expected memory figure of the paper-scale tests is computed here, in
one place: the FSDP memory table of ARCHITECTURE.md (`state_bytes`). The
compiler's activation figures are printed by the tests, not expected here:
when the attention kernels change them, only the `--auto` choices they
steer can move, and those are checked against the plan's own figures.
"""

PRESETS = {
    #             L   D     H   KV  F      V       T     theta
    "llama2-7b": (32, 4096, 32, 32, 11008, 32000, 4096, 10000.0),
    "llama2-70b": (80, 8192, 64, 8, 28672, 32000, 4096, 10000.0),
    "llama3-8b": (32, 4096, 32, 8, 14336, 128256, 8192, 500000.0),
}

# The counts the issue names (two significant digits after the point).
PUBLISHED = {"llama2-7b": "6.74e9", "llama2-70b": "6.90e10", "llama3-8b": "8.03e9"}

GIB = 1 << 30


def parameter_count(preset):
    """Parameters of `preset` from its shapes."""
    layers, d, heads, kv, ffn, vocab, _, _ = PRESETS[preset]
    hd = d // heads
    attn = d * heads * hd + 2 * d * kv * hd + heads * hd * d  # q, k, v, o
    mlp = 3 * d * ffn                                        # gate, up, down
    layer = attn + mlp + 2 * d                               # two RMSNorms
    return vocab * d + layers * layer + d + vocab * d        # embed, norm, head


def short(count):
    """`count` as zshard-gen prints it after the exact figure: 6.74e9."""
    mantissa, exponent = f"{count:.2e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def state_bytes(strategy, P, N, b, offload=False):
    """(parameters, gradients, optimizer state) bytes per rank for Adam with an
    f32 master copy, P parameters of b bytes, N ranks: the table of
    ARCHITECTURE.md, with the sharded strategies' gradient shards in the f32
    reduce dtype (FSDP's reduce_dtype; see paper_table_7b.py). Offloaded
    optimizer state is on the host, not the device."""
    f32 = 4
    optim = 0 if offload else (12 * P if strategy == "no_shard" else 12 * P / N)
    if strategy == "no_shard":
        return P * b, P * b, optim
    params = P * b / N if strategy == "full_shard" else P * b
    return params, P * f32 / N, optim
