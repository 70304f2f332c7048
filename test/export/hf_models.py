#!/usr/bin/env python3
"""Hugging Face models train in zshard as in torch's eager loop.

A small random `LlamaForCausalLM`, `MistralForCausalLM`, `Qwen2ForCausalLM`
or `GPT2LMHeadModel` (python/zshard_export/examples/hf.py: hidden 48, 6 heads
of 8, 2 key/value heads, vocabulary 97, sequence 12, 2 layers), with
attn_implementation "eager" or "sdpa" and Hugging Face's own loss from
`labels=` (shifted cross-entropy, -100 ignored), is exported through the
zshard-export command line, compiled by zshard-compile with one unit per
decoder layer named by its class (`--wrap transformer=LlamaDecoderLayer`,
GPT-2's `GPT2Block`: the units must be `model.layers.<i>`, `transformer.h.<i>`)
under --strategy over --ranks, and run --steps steps
from the exported weights. Every loss equals torch's eager float32 training
of the same model on the same global batches to 1e-4 relative, and both
float32 runs, zshard's (consolidated with --save-full) and torch's, are
judged against torch's training of a float64 copy with the float32 budget
(float64_torch.py, docs/testing.md).

With --uneven-labels, row g of the global batch (of `rows`) has its first
floor(g * (seq - 3) / (rows - 1)) counted labels set to -100 as well, so the ranks (and the
microbatches of --microbatches K) count different numbers of labels; the
losses must still be torch's mean over the global batch's counted labels
(zshard.batch_mean, docs/zshard-export.md "Losses over the global batch").

usage: hf_models.py --family llama|mistral|qwen2|gpt2 --attn eager|sdpa --work DIR
                    [--bin BUILD/bin] [--ranks 4] [--strategy full_shard] [--steps 10]
                    [--tied 0|1] [--window W] [--mask] [--uneven-labels] [--microbatches K]
                    [--remat POLICY] [--opt -O1] [--mpiexec 'mpiexec -n 4']
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import float64_torch  # noqa: E402
import torch  # noqa: E402

from zshard_export.examples import hf  # noqa: E402

try:
    import transformers  # noqa: E402,F401
except ImportError:
    print("SKIP: transformers is not installed in the torch venv (run scripts/setup-torch.sh)")
    sys.exit(77)

REL = 1e-4  # the brief's bound on every loss against torch eager float32


def documented_ops(family):
    """The ops docs/zshard-export.md's op table marks for `family` (column HF)."""
    letter = {"llama": "L", "mistral": "M", "qwen2": "Q", "gpt2": "G"}[family]
    with open(os.path.join(common.ROOT, "docs", "zshard-export.md")) as f:
        rows = re.findall(r"^\| `((?:aten\.)?[A-Za-z0-9_.]+)` \| [^|]* \| ([^|]*) \|", f.read(), re.M)
    return {op for op, hf_col in rows if letter in hf_col.split()}


def uneven_labels(labels, seq):
    """labels with the first g * (seq - 3) // (rows - 1) counted positions of
    global row g ignored too: every row keeps at least two counted labels."""
    labels = labels.clone()
    rows = labels.shape[1]
    for g in range(rows):
        extra = g * (seq - 3) // max(rows - 1, 1)
        labels[:, g, 1:1 + extra] = -100
    return labels


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--family", required=True, choices=hf.FAMILIES)
    p.add_argument("--attn", default="sdpa", choices=("eager", "sdpa"))
    p.add_argument("--bin", default=None)
    p.add_argument("--work", required=True)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--strategy", default="full_shard")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=2, help="rows per rank")
    p.add_argument("--seq", type=int, default=12)
    p.add_argument("--vocab", type=int, default=97)
    p.add_argument("--tied", type=int, default=None)
    p.add_argument("--window", type=int, default=None, help="Mistral's sliding_window")
    p.add_argument("--mask", action="store_true",
                   help="an attention_mask batch input with left padding")
    p.add_argument("--uneven-labels", action="store_true",
                   help="ignore more labels in later rows, so ranks count different numbers")
    p.add_argument("--microbatches", type=int, default=1)
    p.add_argument("--remat", default=None,
                   help="zshard-compile --remat policy; every decoder layer must be checkpointed")
    p.add_argument("--mpiexec", default="")
    p.add_argument("--opt", default="-O1",
                   help="zshard-compile's LLVM level: -O1 compiles these steps in a quarter "
                        "of -O3's time, and the rounding does not depend on it")
    args = p.parse_args()
    if args.bin:
        os.environ["ZSHARD_BIN"] = args.bin
    torch.set_num_threads(1)
    os.makedirs(args.work, exist_ok=True)
    w = lambda name: os.path.join(args.work, name)  # noqa: E731
    n, steps = args.ranks, args.steps

    # Export as a user does: the command line, the example's make().
    if args.microbatches < 1 or args.batch % args.microbatches:
        sys.exit(f"FAIL: --batch {args.batch} is not a multiple of --microbatches "
                 f"{args.microbatches}")
    # The exported step takes one microbatch; zshard-compile --microbatches
    # makes it take the rank's --batch rows.
    sets = ["family=" + args.family, "attn=" + args.attn, f"seq={args.seq}",
            f"vocab={args.vocab}", f"batch={args.batch // args.microbatches}"]
    if args.tied is not None:
        sets.append(f"tied={args.tied}")
    if args.window is not None:
        sets.append(f"window={args.window}")
    if args.mask:
        sets.append("mask=1")
    export = [os.path.join(common.ROOT, "tools", "zshard-export"),
              "zshard_export.examples.hf:make"]
    for s in sets:
        export += ["--set", s]
    common.run(export + ["-o", w("step.mlir"), "--weights", w("init.safetensors"),
                         "--meta", w("step.json")])
    kw = dict(s.split("=", 1) for s in sets)
    model, opt, _, loss_fn = hf.make(**kw)
    meta = json.load(open(w("step.json")))
    tied = model.config.tie_word_embeddings
    if tied and "lm_head.weight" in meta["params"]:
        sys.exit("FAIL: the tied head is exported as a second parameter")
    compile_cmd = [common.tool("zshard-compile"), w("step.mlir"), "--strategy", args.strategy,
                   "--ranks", str(n), "--wrap", "transformer=" + hf.LAYER_CLASSES[args.family],
                   "--microbatches", str(args.microbatches)]
    checkpointed = None
    if args.remat:
        compile_cmd.append("--remat=" + args.remat)
        common.run(compile_cmd + ["--compile-to=remat", "-o", w("remat.mlir")])
        checkpointed = sorted(set(re.findall(r'zshard.remat = "([^"]*)"',
                                             open(w("remat.mlir")).read())))
    common.run(compile_cmd + [args.opt, "-o", w("step.zsa")])
    manifest = json.load(open(w("step.zsa/manifest.json")))
    units = [u["name"] for u in manifest.get("units", [])]

    ids, labels = hf.batches(steps, n * args.batch, args.seq, args.vocab)
    batches = {"input_ids": ids, "labels": labels}
    if args.mask:
        batches["attention_mask"], batches["labels"] = hf.padding_mask(ids, labels)
    counted = None
    if args.uneven_labels:
        batches["labels"] = uneven_labels(batches["labels"], args.seq)
        # Counted labels per rank at step 1 (HF shifts: position 0 never counts).
        counted = [int((batches["labels"][0, r * args.batch:(r + 1) * args.batch, 1:] != -100)
                       .sum()) for r in range(n)]
        if len(set(counted)) == 1:
            sys.exit(f"FAIL: --uneven-labels gave every rank {counted[0]} labels")
    common.save_batches(w("batches.safetensors"), batches)
    cmd = [common.tool("zshard-run"), w("step.zsa"), "--ranks", str(n), "--steps", str(steps),
           "--quiet", "--batch-file", w("batches.safetensors"),
           "--init-from", w("init.safetensors"), "--log-json", w("zshard.jsonl"),
           "--save-full", w("zshard.safetensors")]
    if args.mpiexec:
        cmd = args.mpiexec.split() + cmd + ["--backend", "mpi"]
    common.run(cmd, stdout=open(w("zshard-run.out"), "w"))
    got = common.losses(w("zshard.jsonl"))

    ref_model, ref_opt = common.deepcopy_with_optimizer(model, opt)
    traj, init, hypers = float64_torch.trajectory(ref_model, ref_opt, batches, steps, loss_fn)
    want = common.eager_losses(ref_model, ref_opt, batches, steps, loss_fn)
    failures, reports = float64_torch.judge(traj, init, hypers, {
        f"zshard {args.strategy} on {n} ranks": (
            got, common.safetensors_io.load_file(w("zshard.safetensors"))),
        "torch eager float32": (want, float64_torch.torch_state(ref_model, ref_opt))})
    rel = [abs(a - b) / abs(b) for a, b in zip(got, want)]
    print(json.dumps({"family": args.family, "attn": args.attn, "tied": tied, "mask": args.mask,
                      "sliding_window": getattr(model.config, "sliding_window", None), "ranks": n,
                      "strategy": args.strategy, "units": units,
                      "microbatches": args.microbatches, "labels_per_rank": counted,
                      "remat": args.remat, "checkpointed": checkpointed,
                      "backend": "mpi" if args.mpiexec else "local",
                      "max_rel_loss_diff_vs_torch_f32": max(rel, default=None),
                      "zshard": got, "torch": want, "judged": reports}))
    if len(got) != steps:
        sys.exit(f"FAIL: zshard-run logged {len(got)} losses, expected {steps}")
    layer_units = [u for u in units if u != "root"]
    expected = [hf.LAYERS[args.family].replace("<i>", str(i))
                for i in range(model.config.num_hidden_layers)]
    if sorted(layer_units) != sorted(expected):
        sys.exit(f"FAIL: --wrap transformer={hf.LAYER_CLASSES[args.family]} gave units "
                 f"{units}: expected one per decoder layer, {expected}")
    if args.remat and checkpointed != sorted(expected):
        sys.exit(f"FAIL: --remat={args.remat} checkpointed {checkpointed}: expected every "
                 f"decoder layer, {expected}")
    bad = [(s, a, b) for s, (a, b) in enumerate(zip(got, want)) if abs(a - b) > REL * abs(b)]
    if bad:
        s, a, b = bad[0]
        sys.exit(f"FAIL: step {s + 1}: zshard loss {a!r}, torch eager {b!r} "
                 f"(relative {abs(a - b) / abs(b):.2e} > {REL})")
    if failures:
        sys.exit("FAIL: " + "; ".join(failures[:4]))
    undocumented = [o for o in meta["ops"] if o not in documented_ops(args.family)]
    if undocumented:
        sys.exit(f"FAIL: ops of the {args.family} graph not marked for it in the op table of "
                 f"docs/zshard-export.md: {', '.join(undocumented)}")
    if not want[-1] < want[0]:
        sys.exit("FAIL: the loss did not fall; the comparison would prove little")
    print(f"OK: {args.family} ({args.attn} attention) {args.strategy} on {n} ranks, "
          f"{len(layer_units)} layer units: every loss within {max(rel):.2e} of torch eager, "
          f"both within the float32 budget of float64 over {steps} steps")


if __name__ == "__main__":
    main()
