"""Hugging Face causal language models from small random configurations.

`make` builds `LlamaForCausalLM`, `MistralForCausalLM`, `Qwen2ForCausalLM`
or `GPT2LMHeadModel` from a config object (nothing is downloaded), with
torch's initialisation under a seed, AdamW over its parameters, one example
batch of `input_ids` and `labels`, and the loss Hugging Face computes from
`labels=` (shifted cross-entropy, positions labelled -100 ignored):

    tools/zshard-export zshard_export.examples.hf:make --set family=llama \\
        --set attn=sdpa -o llama.mlir --weights llama.safetensors

Needs `transformers` (pinned in scripts/setup-torch.sh).
"""

import torch

FAMILIES = ("llama", "mistral", "qwen2", "gpt2")
# Where each family keeps its decoder layers: the wrap pattern of one unit
# per layer (zshard-compile --wrap transformer=PATTERN).
LAYERS = {"llama": "model.layers.<i>", "mistral": "model.layers.<i>",
          "qwen2": "model.layers.<i>", "gpt2": "transformer.h.<i>"}
# The decoder layer classes FSDP recipes wrap (transformer_layer_cls).
LAYER_CLASSES = {"llama": "LlamaDecoderLayer", "mistral": "MistralDecoderLayer",
                 "qwen2": "Qwen2DecoderLayer", "gpt2": "GPT2Block"}


def config(family, layers=2, hidden=48, heads=6, kv_heads=2, vocab=97, intermediate=80,
           positions=64, attn="sdpa", tied=None, window=None):
    """The transformers config of a small model of `family`."""
    import transformers
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    if attn not in ("eager", "sdpa"):
        raise ValueError(f"attn must be 'eager' or 'sdpa', got {attn!r}")
    if family == "gpt2":
        cfg = transformers.GPT2Config(
            vocab_size=vocab, n_embd=hidden, n_layer=layers, n_head=heads,
            n_positions=positions, n_inner=intermediate, resid_pdrop=0.0, embd_pdrop=0.0,
            attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    else:
        cls = {"llama": transformers.LlamaConfig, "mistral": transformers.MistralConfig,
               "qwen2": transformers.Qwen2Config}[family]
        cfg = cls(vocab_size=vocab, hidden_size=hidden, intermediate_size=intermediate,
                  num_hidden_layers=layers, num_attention_heads=heads,
                  num_key_value_heads=kv_heads, max_position_embeddings=positions,
                  attention_dropout=0.0, bos_token_id=0, eos_token_id=0, pad_token_id=None)
    if window is not None:  # Mistral's sliding-window attention
        if family != "mistral":
            raise ValueError("window is Mistral's sliding_window")
        cfg.sliding_window = int(window)
    if tied is not None:
        cfg.tie_word_embeddings = bool(tied)
    cfg._attn_implementation = attn
    return cfg


def model_class(family):
    import transformers
    return {"llama": transformers.LlamaForCausalLM, "mistral": transformers.MistralForCausalLM,
            "qwen2": transformers.Qwen2ForCausalLM, "gpt2": transformers.GPT2LMHeadModel}[family]


def loss_fn(model, input_ids, labels):
    """Hugging Face's causal-LM loss, as model(..., labels=labels) computes it."""
    return model(input_ids=input_ids, labels=labels).loss


def loss_fn_masked(model, input_ids, labels, attention_mask):
    """loss_fn with a padding mask (1: a token, 0: padding), as batches of
    padded sequences are fed."""
    return model(input_ids=input_ids, labels=labels, attention_mask=attention_mask).loss


def padding_mask(ids, labels, pad=3):
    """attention_mask of left padding: even rows start with `pad` padding
    tokens, odd rows with none (so every pair of rows counts as many labels);
    the padded positions' labels become -100. Returns (mask, labels)."""
    mask = torch.ones_like(ids)
    mask[..., 0::2, :pad] = 0
    labels = labels.masked_fill(mask == 0, -100)
    return mask, labels


def batches(steps, rows, seq, vocab, ignore=1, seed=7):
    """Random `input_ids` and learnable `labels` ([steps, rows, seq]): labels[t]
    is a function of input_ids[t - 1] (the shift Hugging Face applies makes
    position t - 1 predict it), and the first `ignore` labels of every row are
    -100, so every row has the same number of counted positions (the mean over
    ranks of each rank's mean loss is then the global mean)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (steps, rows, seq), generator=g)
    labels = torch.full_like(ids, -100)
    labels[..., 1:] = (ids[..., :-1] * 3 + 1) % vocab
    labels[..., :ignore] = -100
    return ids, labels


def make(family="llama", attn="sdpa", layers=2, hidden=48, heads=6, kv_heads=2, vocab=97,
         intermediate=80, seq=12, batch=2, lr=3e-3, seed=0, tied=None, window=None,
         mask=0, weight_decay=0.1):
    """(model, optimizer, batch, loss_fn) for zshard-export: a `family` model
    with torch's initialisation under torch.manual_seed(seed), in training
    mode, AdamW, and one example batch (with mask=1, also an attention_mask
    of left padding)."""
    torch.manual_seed(int(seed))
    cfg = config(family, int(layers), int(hidden), int(heads), int(kv_heads), int(vocab),
                 int(intermediate), max(64, int(seq)), attn,
                 None if tied is None else bool(int(tied)), window)
    model = model_class(family)(cfg)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=float(lr), betas=(0.9, 0.95),
                            weight_decay=float(weight_decay))
    ids, labels = batches(1, int(batch), int(seq), int(vocab), seed=int(seed) + 1)
    if int(mask):
        attention_mask, labels = padding_mask(ids, labels)
        return model, opt, {"input_ids": ids[0], "labels": labels[0],
                            "attention_mask": attention_mask[0]}, loss_fn_masked
    return model, opt, {"input_ids": ids[0], "labels": labels[0]}, loss_fn
