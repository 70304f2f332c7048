#!/usr/bin/env python3
"""Checkpoints of exported Hugging Face models go back into torch, and
torch's come into zshard.

--mode trained: a small random-init `--family` model (hf.py: hidden 48, 6
  heads, 2 key/value heads, vocabulary 97, sequence 12, 2 layers; `--tied`
  head or not) is exported through the command line, compiled (unsharded, or
  `--strategy` over `--ranks` rank threads with one unit per decoder layer)
  and trained `--steps` steps by zshard-run, which writes `--save-torch` and
  `--save-full`. The torch file holds exactly the model's state_dict (names,
  dtypes, shapes; a tied head under both names, equal), loads with
  `model.load_state_dict(safetensors.torch.load_file(F), strict=True)`, and
  torch eager's loss of the loaded model on the next batch equals the loss
  zshard computes at the next step (`--resume-full` of the consolidated file,
  one more step) to 1e-4 relative; `--init-from` of the torch file itself
  starts from the same loss, and Hugging Face's `from_pretrained` of the file
  beside the model's config.json gives load_state_dict's loss exactly.
--mode pretrained: `model.save_pretrained(dir)` of a random-init model (other
  weights than the exported ones; `--dtype bfloat16`: the model in bf16,
  as Hugging Face checkpoints are often stored), `zshard-run --init-from
  dir/model.safetensors`: the first loss equals torch eager's loss of that
  model (in float32) to 1e-4.
--mode buffers: a model with persistent buffers (a float one the forward
  reads, a buffer argument of the step; a 0-d int64 one it does not, folded),
  exported through export_step: the --save-torch file holds them with their
  values, loads strictly and gives torch the next loss; a file whose folded
  buffer holds other values is refused.
--mode bad-input: --init-from of a save_pretrained file with one tensor
  missing, one extra, one of the wrong shape, a tied head that differs from
  its embedding: one line naming the first mismatch, exit status 2 (every
  zshard-run error's), each message exact.

usage: hf_checkpoint.py --mode trained|pretrained|bad-input --family llama|gpt2|...
                        --work DIR [--bin BUILD/bin] [--tied 0|1] [--strategy S --ranks N]
                        [--steps 3] [--dtype float32|bfloat16]
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import torch  # noqa: E402

from zshard_export.examples import hf  # noqa: E402

try:
    import safetensors.torch  # noqa: E402
    import transformers  # noqa: E402,F401
except ImportError:
    print("SKIP: transformers/safetensors are not installed in the torch venv "
          "(run scripts/setup-torch.sh)")
    sys.exit(77)

REL = 1e-4
SEQ, VOCAB, ROWS = 12, 97, 2  # rows per rank


def rel(a, b):
    return abs(a - b) / abs(b)


class Case:
    def __init__(self, args):
        self.args = args
        os.makedirs(args.work, exist_ok=True)
        self.sets = {"family": args.family, "attn": "sdpa", "seq": str(SEQ),
                     "vocab": str(VOCAB), "batch": str(ROWS)}
        if args.tied is not None:
            self.sets["tied"] = str(args.tied)
        self.ranks = args.ranks if args.strategy else 1

    def w(self, name):
        return os.path.join(self.args.work, name)

    def export_and_compile(self):
        cmd = [os.path.join(common.ROOT, "tools", "zshard-export"),
               "zshard_export.examples.hf:make"]
        for k, v in self.sets.items():
            cmd += ["--set", f"{k}={v}"]
        common.run(cmd + ["-o", self.w("step.mlir"), "--weights", self.w("init.safetensors"),
                          "--meta", self.w("step.json")])
        compile_cmd = [common.tool("zshard-compile"), self.w("step.mlir"), "-O1",
                       "-o", self.w("step.zsa")]
        if self.args.strategy:
            compile_cmd += ["--strategy", self.args.strategy, "--ranks", str(self.ranks),
                            "--wrap", "transformer=" + hf.LAYERS[self.args.family]]
        common.run(compile_cmd)

    def model(self, **changes):
        kw = dict(self.sets)
        kw.update(changes)
        model, _, _, loss_fn = hf.make(**kw)
        return model, loss_fn

    def zshard(self, *args, check=True):
        cmd = [common.tool("zshard-run"), self.w("step.zsa"), "--ranks", str(self.ranks),
               "--quiet"] + [str(a) for a in args]
        print("+", " ".join(cmd), flush=True)
        return subprocess.run(cmd, check=check, capture_output=True, text=True)

    def zshard_losses(self, log, *args):
        self.zshard("--log-json", self.w(log), *args)
        return common.losses(self.w(log))


def torch_loss(model, loss_fn, ids, labels):
    with torch.no_grad():
        return float(loss_fn(model, input_ids=ids, labels=labels))


def check_state_dict(model, path):
    """The file holds exactly model's state_dict; returns it."""
    sd = safetensors.torch.load_file(path)
    want = model.state_dict()
    if list(sd) != list(want) and set(sd) != set(want):
        missing = [k for k in want if k not in sd]
        extra = [k for k in sd if k not in want]
        sys.exit(f"FAIL: {path}: state_dict keys differ: missing {missing[:3]}, extra {extra[:3]}")
    for k, t in want.items():
        if sd[k].dtype != t.dtype or sd[k].shape != t.shape:
            sys.exit(f"FAIL: {path}: '{k}' is {sd[k].dtype} {list(sd[k].shape)}, the model's "
                     f"{t.dtype} {list(t.shape)}")
    return sd


def trained(case):
    args, n, k = case.args, case.ranks, case.args.steps
    case.export_and_compile()
    ids, labels = hf.batches(k + 1, n * ROWS, SEQ, VOCAB)
    common.save_batches(case.w("batches.safetensors"), {"input_ids": ids, "labels": labels})
    common.save_batches(case.w("next.safetensors"), {"input_ids": ids[k], "labels": labels[k]})
    got = case.zshard_losses("train.jsonl", "--steps", k, "--batch-file",
                             case.w("batches.safetensors"), "--init-from",
                             case.w("init.safetensors"), "--save-torch",
                             case.w("torch.safetensors"), "--save-full",
                             case.w("full.safetensors"))
    # zshard's next step: the consolidated checkpoint resumed for one step
    # (batch entry k of the same file).
    resumed = case.zshard_losses("next.jsonl", "--steps", 1, "--batch-file",
                                 case.w("batches.safetensors"), "--resume-full",
                                 case.w("full.safetensors"))
    # The torch file as --init-from (a tied head under both names).
    from_torch = case.zshard_losses("init-torch.jsonl", "--steps", 1, "--batch-file",
                                    case.w("next.safetensors"), "--init-from",
                                    case.w("torch.safetensors"))

    model, loss_fn = case.model(seed=11)  # other weights: the file must replace them all
    untrained = torch_loss(model, loss_fn, ids[k], labels[k])
    sd = check_state_dict(model, case.w("torch.safetensors"))
    model.load_state_dict(sd, strict=True)
    tied = model.config.tie_word_embeddings
    if tied:
        if "lm_head.weight" not in sd or not torch.equal(
                sd["lm_head.weight"], model.get_input_embeddings().weight):
            sys.exit("FAIL: the tied head is not saved under lm_head.weight equal to the embedding")
        if model.lm_head.weight.data_ptr() != model.get_input_embeddings().weight.data_ptr():
            sys.exit("FAIL: the head is no longer tied after load_state_dict")
    want = torch_loss(model, loss_fn, ids[k], labels[k])
    # The file as a Hugging Face checkpoint: beside the config, from_pretrained.
    import shutil
    hf_dir = case.w("hf-out")
    model.config.save_pretrained(hf_dir)
    shutil.copy(case.w("torch.safetensors"), os.path.join(hf_dir, "model.safetensors"))
    reloaded = transformers.AutoModelForCausalLM.from_pretrained(hf_dir)
    reloaded.train()
    hf_loss = torch_loss(reloaded, loss_fn, ids[k], labels[k])
    exported, _ = case.model()
    init_loss = torch_loss(exported, loss_fn, ids[k], labels[k])
    figures = {"family": args.family, "tied": tied, "strategy": args.strategy or "unsharded",
               "ranks": n, "steps": k, "zshard_losses": got, "zshard_next": resumed[0],
               "torch_next": want, "rel_next": rel(resumed[0], want),
               "zshard_init_from_torch_file": from_torch[0],
               "rel_init_from_torch_file": rel(from_torch[0], want),
               "torch_loss_exported_weights": init_loss, "keys": len(sd),
               "from_pretrained_loss": hf_loss}
    print(json.dumps(figures))
    if len(got) != k or len(resumed) != 1:
        sys.exit("FAIL: zshard-run logged the wrong number of steps")
    if rel(resumed[0], want) > REL:
        sys.exit(f"FAIL: zshard's loss at step {k + 1} {resumed[0]!r}, torch eager's of the "
                 f"loaded checkpoint {want!r} (relative {rel(resumed[0], want):.2e} > {REL})")
    if hf_loss != want:
        sys.exit(f"FAIL: from_pretrained of the torch file beside the config: loss {hf_loss!r}, "
                 f"load_state_dict's {want!r}")
    if rel(from_torch[0], want) > REL:
        sys.exit(f"FAIL: --init-from the torch file: loss {from_torch[0]!r}, torch {want!r}")
    if rel(init_loss, want) < 1e-3 or rel(untrained, want) < 1e-3:
        sys.exit("FAIL: the trained checkpoint's loss is the untrained model's; the test "
                 "would prove little")
    print(f"OK: {args.family} (tied {tied}) {figures['strategy']} on {n} ranks: the "
          f"--save-torch file loads with strict=True; next loss {resumed[0]:.7f} vs torch "
          f"{want:.7f} (relative {figures['rel_next']:.1e})")


def save_pretrained(case, dtype):
    model, loss_fn = case.model(seed=5)
    if dtype == "bfloat16":
        model = model.to(torch.bfloat16)
    out = case.w("pretrained")
    model.save_pretrained(out)
    return model.float(), loss_fn, os.path.join(out, "model.safetensors")


def pretrained(case):
    case.export_and_compile()
    model, loss_fn, path = save_pretrained(case, case.args.dtype)
    saved = safetensors.torch.load_file(path)
    ids, labels = hf.batches(1, case.ranks * ROWS, SEQ, VOCAB, seed=3)
    common.save_batches(case.w("batch.safetensors"), {"input_ids": ids[0], "labels": labels[0]})
    got = case.zshard_losses("pretrained.jsonl", "--steps", 1, "--batch-file",
                             case.w("batch.safetensors"), "--init-from", path)
    want = torch_loss(model, loss_fn, ids[0], labels[0])
    exported, _ = case.model()
    other = torch_loss(exported, loss_fn, ids[0], labels[0])
    figures = {"family": case.args.family, "tied": model.config.tie_word_embeddings,
               "dtype": case.args.dtype, "ranks": case.ranks, "keys_in_file": len(saved),
               "state_dict_keys": len(model.state_dict()), "zshard": got[0], "torch": want,
               "rel": rel(got[0], want), "torch_loss_exported_weights": other}
    print(json.dumps(figures))
    if rel(got[0], want) > REL:
        sys.exit(f"FAIL: --init-from {path}: first loss {got[0]!r}, torch eager {want!r} "
                 f"(relative {rel(got[0], want):.2e} > {REL})")
    if rel(other, want) < 1e-3:
        sys.exit("FAIL: the saved model's loss is the exported weights'; the test would "
                 "prove little")
    print(f"OK: save_pretrained ({case.args.dtype}) of {case.args.family} into zshard-run "
          f"--init-from: first loss {got[0]:.7f} vs torch {want:.7f} "
          f"(relative {figures['rel']:.1e})")


def bad_input(case):
    case.export_and_compile()
    _, _, path = save_pretrained(case, "float32")
    sd = safetensors.torch.load_file(path)
    ids, labels = hf.batches(1, case.ranks * ROWS, SEQ, VOCAB)
    common.save_batches(case.w("batch.safetensors"), {"input_ids": ids[0], "labels": labels[0]})
    norm = "model.norm.weight" if "model.norm.weight" in sd else "transformer.ln_f.weight"
    embed = "model.embed_tokens.weight" if norm.startswith("model.") else \
        "transformer.wte.weight"
    where = " in unit 'root'" if case.ranks > 1 else ""
    cases = {
        "missing": ({k: v for k, v in sd.items() if k != norm},
                    f"no tensor for param '{norm}' (f32 [48]{',' + where if where else ''})"),
        "extra": (dict(sd, **{"model.extra.bias": torch.zeros(3)}),
                  "tensor 'model.extra.bias' is neither a param nor an opt_state of the step"),
        "shape": (dict(sd, **{norm: torch.ones(47)}),
                  f"tensor '{norm}' has shape [47], but param '{norm}' (f32 "
                  f"[48]{',' + where if where else ''}) does not"),
    }
    # Two mismatches: the first in the step's order is named (the layer's
    # norm comes before the final one).
    first = "model.layers.0.input_layernorm.weight" if norm.startswith("model.") else \
        "transformer.h.0.ln_1.weight"
    cases["first-of-two"] = (
        dict({k: v for k, v in sd.items() if k != norm}, **{first: torch.ones(47)}),
        f"tensor '{first}' has shape [47], but param '{first}' (f32 "
        f"[48]{', in unit ' + repr(hf.LAYERS[case.args.family].replace('<i>', '0')) if where else ''}"
        f") does not")
    if "lm_head.weight" in case.model()[0].state_dict() and "lm_head.weight" not in sd:
        cases["tied-differs"] = (
            dict(sd, **{"lm_head.weight": sd[embed] + 1}),
            f"tensor 'lm_head.weight' differs from '{embed}', which it is tied to (the step "
            f"holds one tensor for both)")
        cases["tied-shape"] = (
            dict(sd, **{"lm_head.weight": sd[embed][:3].clone()}),
            f"tensor 'lm_head.weight' has shape [3, 48], but tied weight 'lm_head.weight' "
            f"(f32 [{VOCAB}, 48]) does not")
    failures = []
    for name, (tensors, message) in cases.items():
        bad = case.w(f"bad-{name}.safetensors")
        safetensors.torch.save_file(tensors, bad, metadata={"format": "pt"})
        res = case.zshard("--steps", 1, "--batch-file", case.w("batch.safetensors"),
                          "--init-from", bad, check=False)
        want = f"zshard-run: error: {bad}: {message}"
        lines = res.stderr.splitlines()
        print(json.dumps({"case": name, "rc": res.returncode, "stderr": lines}))
        if res.returncode != 2 or lines != [want]:
            failures.append(f"{name}: rc {res.returncode}, stderr {lines!r}, want [{want!r}]")
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print(f"OK: {len(cases)} bad checkpoints for {case.args.family} on {case.ranks} rank(s), "
          f"each one exact line, exit status 2")


class Scaled(torch.nn.Module):
    """A model with persistent buffers: one the forward reads, a 0-d integer
    one it does not."""

    def __init__(self, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.emb = torch.nn.Embedding(VOCAB, 16)
        self.fc = torch.nn.Linear(16, VOCAB)
        self.register_buffer("scale", torch.linspace(0.5, 2.0, 16))
        self.register_buffer("version", torch.tensor(3))

    def forward(self, input_ids, labels):
        logits = self.fc(self.emb(input_ids) * self.scale)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))


def buffers(case):
    from zshard_export import export_step
    k = case.args.steps
    model = Scaled(0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    ids, labels = hf.batches(k + 1, ROWS, SEQ, VOCAB)
    export_step(model, opt, {"input_ids": ids[0], "labels": labels[0]}).write(
        case.w("step.mlir"), case.w("init.safetensors"), case.w("step.json"))
    common.run([common.tool("zshard-compile"), case.w("step.mlir"), "-O1", "-o",
                case.w("step.zsa")])
    common.save_batches(case.w("batches.safetensors"), {"input_ids": ids, "labels": labels})
    common.save_batches(case.w("next.safetensors"), {"input_ids": ids[k], "labels": labels[k]})
    case.zshard_losses("train.jsonl", "--steps", k, "--batch-file", case.w("batches.safetensors"),
                       "--init-from", case.w("init.safetensors"), "--save-torch",
                       case.w("torch.safetensors"), "--save-full", case.w("full.safetensors"))
    nxt = case.zshard_losses("next.jsonl", "--steps", 1, "--batch-file",
                             case.w("batches.safetensors"), "--resume-full",
                             case.w("full.safetensors"))[0]
    again = case.zshard_losses("init-torch.jsonl", "--steps", 1, "--batch-file",
                               case.w("next.safetensors"), "--init-from",
                               case.w("torch.safetensors"))[0]
    fresh = Scaled(1)
    sd = check_state_dict(fresh, case.w("torch.safetensors"))
    if not torch.equal(sd["scale"], model.scale) or not torch.equal(sd["version"], model.version):
        sys.exit("FAIL: the persistent buffers are not saved with their values")
    fresh.load_state_dict(sd, strict=True)
    with torch.no_grad():
        want = float(fresh(ids[k], labels[k]))
    # A file whose folded buffer (the integer one; the float one is a buffer
    # argument, which --init-from reads) holds other values is refused.
    bad = case.w("bad-buffer.safetensors")
    safetensors.torch.save_file(dict(sd, version=sd["version"] + 1), bad)
    res = case.zshard("--steps", 1, "--batch-file", case.w("next.safetensors"), "--init-from",
                      bad, check=False)
    line = (f"zshard-run: error: {bad}: tensor 'version' holds other values than buffer "
            f"'version' (i64 []), which is folded into the step (re-export the model with them)")
    print(json.dumps({"keys": list(sd), "zshard_next": nxt, "torch_next": want,
                      "rel_next": rel(nxt, want), "zshard_init_from_torch_file": again,
                      "bad_buffer": {"rc": res.returncode, "stderr": res.stderr.splitlines()}}))
    if rel(nxt, want) > REL or rel(again, want) > REL:
        sys.exit(f"FAIL: zshard's next loss {nxt!r} (from the torch file {again!r}), torch "
                 f"eager's of the loaded checkpoint {want!r}")
    if res.returncode != 2 or res.stderr.splitlines() != [line]:
        sys.exit(f"FAIL: a changed buffer: rc {res.returncode}, stderr {res.stderr!r}, "
                 f"want {line!r}")
    print(f"OK: persistent buffers saved with their values; strict load; next loss {nxt:.7f} "
          f"vs torch {want:.7f} (relative {rel(nxt, want):.1e}); a changed buffer refused")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", required=True, choices=("trained", "pretrained", "bad-input", "buffers"))
    p.add_argument("--family", default="llama", choices=hf.FAMILIES)
    p.add_argument("--work", required=True)
    p.add_argument("--bin", default=None)
    p.add_argument("--tied", type=int, default=None)
    p.add_argument("--strategy", default=None)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    args = p.parse_args()
    if args.bin:
        os.environ["ZSHARD_BIN"] = args.bin
    torch.set_num_threads(1)
    case = Case(args)
    {"trained": trained, "pretrained": pretrained, "bad-input": bad_input,
     "buffers": buffers}[args.mode](case)


if __name__ == "__main__":
    main()
