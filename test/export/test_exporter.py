"""zshard-export: contract form, numerics against torch, the op table in the
docs, and bad input (data-dependent control flow, unsupported ops, buffers,
optimizers it cannot express) failing with a clear message and no output.

Run: ZSHARD_BIN=build/bin .venv-torch/bin/python -m unittest discover -s test/export
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import float64_torch  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from zshard_export import ExportError, export_step  # noqa: E402
from zshard_export.examples import nanogpt  # noqa: E402
from zshard_export.lower import OPS  # noqa: E402

torch.set_num_threads(1)
DOC = os.path.join(common.ROOT, "docs", "zshard-export.md")


def tiny_gpt(**kw):
    args = dict(layers=2, heads=2, d_model=16, vocab=32, seq=8, batch=2, lr=3e-3)
    args.update(kw)
    return nanogpt.make(**args)


def verify(mlir_text, *passes):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(mlir_text)
    try:
        return subprocess.run([common.tool("zshard-opt"), f.name, "--zshard-verify-contract",
                               *passes, "-o", os.devnull], capture_output=True, text=True)
    finally:
        os.unlink(f.name)


def arg_attrs(mlir_text):
    """(role, name) of every argument of the step, in order."""
    head = mlir_text.split("attributes {zshard.step}", 1)[0].split("-> (", 1)[0]
    out = []
    for attrs in re.findall(r"%arg\d+: [^{]*\{([^}]*)\}", head):
        d = dict(re.findall(r'(zshard\.\w+) = "([^"]*)"', attrs))
        role = re.search(r"zshard\.role = #zshard\.role<(\w+)>", attrs)
        out.append((d.get("zshard.name"), role.group(1) if role else None))
    return out


class ContractTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model, cls.opt, cls.batch, cls.loss_fn = tiny_gpt()
        cls.result = export_step(cls.model, cls.opt, cls.batch, cls.loss_fn)

    def test_verifies(self):
        r = verify(self.result.mlir)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_roles_names_and_tied_weight(self):
        args = arg_attrs(self.result.mlir)
        params = [n for n, role in args if role == "param"]
        self.assertEqual(params, [n for n, _ in self.model.named_parameters()])
        self.assertIn("transformer.wte.weight", params)
        self.assertNotIn("lm_head.weight", params)  # tied: one argument, used twice
        self.assertEqual(params.count("transformer.wte.weight"), 1)
        states = [n for n, role in args if role == "opt_state"]
        self.assertEqual(states, [p + ".exp_avg" for p in params] +
                         [p + ".exp_avg_sq" for p in params])
        self.assertEqual([n for n, r in args if r == "batch"], ["idx", "targets"])
        self.assertEqual([n for n, r in args if r == "hyper"], ["lr", "step"])
        self.assertIn('tensor<2x8xi32> {zshard.name = "idx", zshard.role = #zshard.role<batch>}',
                      self.result.mlir)

    def test_init_specs(self):
        self.assertIn('zshard.init = #zshard.init<ones>, zshard.name = "transformer.h.0.ln_1.weight"',
                      self.result.mlir)
        self.assertIn('zshard.init = #zshard.init<zeros>, zshard.name = "transformer.h.0.attn.c_attn.bias"',
                      self.result.mlir)
        m = re.search(r'zshard.init = #zshard.init<normal\(0, ([0-9.]+)\)>, zshard.name = '
                      r'"transformer.h.0.mlp.c_fc.weight"', self.result.mlir)
        self.assertIsNotNone(m)
        self.assertAlmostEqual(float(m.group(1)), 0.02, delta=0.004)

    def test_module_paths(self):
        paths = set(re.findall(r'zshard.path = "([^"]*)"', self.result.mlir))
        for path in ("transformer.wte", "transformer.wpe", "transformer.h.0.ln_1",
                     "transformer.h.0.attn", "transformer.h.0.attn.c_attn",
                     "transformer.h.1.mlp.c_fc", "transformer.h.1.mlp.gelu",
                     "transformer.ln_f", "lm_head"):
            self.assertIn(path, paths)
        # The root module's ops (the loss) have none.
        self.assertNotIn("", paths)
        # The backward of the MLP's first linear carries its path too: c_fc
        # appears on more matmuls than the forward alone has.
        n = len(re.findall(r'linalg.matmul[^\n]*zshard.path = "transformer.h.0.mlp.c_fc"',
                           self.result.mlir))
        self.assertEqual(n, 3)  # forward, d input, d weight
        # The locations name the paths as well, as debug information.
        self.assertIn('loc("transformer.h.0.attn")', self.result.mlir)

    def test_module_paths_survive_printing(self):
        # Printed without debug info (no locations), the step keeps every
        # module path.
        plain = subprocess.run([common.tool("zshard-opt"), "-", "--mlir-print-debuginfo=false"],
                               input=self.result.mlir, capture_output=True, text=True, check=True)
        self.assertNotIn("loc(", plain.stdout)
        paths = re.findall(r'zshard.path = "([^"]*)"', self.result.mlir)
        self.assertGreater(len(paths), 100)
        self.assertEqual(sorted(re.findall(r'zshard.path = "([^"]*)"', plain.stdout)),
                         sorted(paths))

    def test_lr_is_the_hyper_s_default(self):
        self.assertRegex(self.result.mlir, r'%arg\d+: tensor<f32> \{zshard\.default = 0\.003 : '
                         r'f64, zshard\.name = "lr", zshard\.role = #zshard\.role<hyper>\}')
        self.assertRegex(self.result.mlir, r'%arg\d+: tensor<f32> \{zshard\.name = "step", '
                         r'zshard\.role = #zshard\.role<hyper>\}')

    def test_lr_literal_is_exact(self):
        """The f64 literal has the '.' MLIR's lexer needs and parses back to
        the same float."""
        from zshard_export.export import _f64
        for x, text in ((1e-3, "0.001"), (3e-5, "3.0e-05"), (6e-4, "0.0006"), (1.0, "1.0"),
                        (0.1 + 0.2, "0.30000000000000004"), (2.5e-10, "2.5e-10"), (0.0, "0.0")):
            self.assertEqual(_f64(x), text)
            self.assertEqual(float(_f64(x)), x)
        model, opt, batch, _ = tiny_gpt(lr=3e-5, layers=1)
        r = verify(export_step(model, opt, batch).mlir)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_adamw_form_shards(self):
        for strategy in ("full_shard", "no_shard"):
            r = verify(self.result.mlir, "--zshard-form-units=policy=transformer "
                       f"pattern=transformer.h.<i> ranks=4 strategy={strategy}",
                       "--zshard-shard")
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_weights_are_the_module_s(self):
        for name, p in self.model.named_parameters():
            self.assertTrue(torch.equal(torch.from_numpy(self.result.weights[name]), p.detach()))
        self.assertEqual(self.result.meta["lr"], 3e-3)
        wd = {n: g["weight_decay"] for n, g in self.result.meta["adamw"].items()}
        self.assertEqual(wd["transformer.wte.weight"], 0.1)
        self.assertEqual(wd["transformer.h.0.ln_1.bias"], 0.0)

    def test_every_gpt_op_is_documented(self):
        with open(DOC) as f:
            doc = f.read()
        documented = set(re.findall(r"^\| `((?:aten\.)?[A-Za-z0-9_.]+)` \|", doc, re.M))
        missing = sorted(set(self.result.meta["ops"]) - documented)
        self.assertEqual(missing, [], "ops of the GPT joint graph missing from the docs table")
        unknown = sorted(o for o in documented if o.startswith("aten.") and
                         o not in {str(k) for k in OPS})
        self.assertEqual(unknown, [], "documented ops the exporter does not lower")


class NumericsTest(unittest.TestCase):
    """Unsharded compiled steps against torch eager, a few steps."""

    def compile_and_compare(self, model, opt, batches, steps, loss_fn=None):
        """The compiled step and torch's float32 eager training, each judged
        against torch's float64 training with the float32 budget
        (float64_torch.py, docs/testing.md): losses, every parameter and
        both AdamW moments after the last step."""
        traj, init, hypers = float64_torch.trajectory(model, opt, batches, steps, loss_fn)
        ref_model, ref_opt = common.deepcopy_with_optimizer(model, opt)
        first = {k: v[0] for k, v in batches.items()}
        result = export_step(model, opt, first, loss_fn)
        with tempfile.TemporaryDirectory() as d:
            w = lambda n: os.path.join(d, n)  # noqa: E731
            result.write(w("s.mlir"), w("init.safetensors"))
            common.run([common.tool("zshard-compile"), w("s.mlir"), "-o", w("s.zsa")],
                       capture_output=True)
            common.save_batches(w("b.safetensors"), batches)
            common.run([common.tool("zshard-run"), w("s.zsa"), "--steps", str(steps),
                        "--lr", repr(result.meta["lr"]), "--quiet",
                        "--batch-file", w("b.safetensors"), "--init-from", w("init.safetensors"),
                        "--log-json", w("l.jsonl"), "--save", w("final.safetensors")],
                       capture_output=True)
            got = common.losses(w("l.jsonl"))
            final = common.safetensors_io.load_file(w("final.safetensors"))
        want = common.eager_losses(ref_model, ref_opt, batches, steps, loss_fn)
        self.assertEqual(len(got), steps)
        failures, _ = float64_torch.judge(traj, init, hypers, {
            "compiled step": (got, final),
            "torch eager float32": (want, float64_torch.torch_state(ref_model, ref_opt))})
        self.assertEqual(failures, [], "; ".join(failures[:3]))
        return got, want

    def test_adamw_matches_torch(self):
        """The AdamW update, parameters and both moments, against torch's:
        two groups with their own betas, eps and weight decay."""
        torch.manual_seed(2)
        model = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 2))
        weights = [p for p in model.parameters() if p.dim() == 2]
        biases = [p for p in model.parameters() if p.dim() == 1]
        opt = torch.optim.AdamW([
            {"params": weights, "weight_decay": 0.5, "betas": (0.8, 0.9), "eps": 1e-6},
            {"params": biases, "weight_decay": 0.0, "betas": (0.9, 0.99), "eps": 1e-8}], lr=0.05)
        g = torch.Generator().manual_seed(9)
        batches = {"x": torch.randn(4, 8, 6, generator=g), "y": torch.randn(4, 8, 2, generator=g)}
        self.compile_and_compare(model, opt, batches, 4,
                                 loss_fn=lambda m, x, y: F.mse_loss(m(x), y))

    def test_gpt_three_steps(self):
        model, opt, _, _ = tiny_gpt()
        idx, targets = common.random_batches(3, 2, 8, 32)
        self.compile_and_compare(model, opt, {"idx": idx, "targets": targets}, 3)

    def test_gpt_untied_without_biases(self):
        """nanoGPT's bias=False (LayerNorm without bias) and an untied LM head."""
        torch.manual_seed(1)
        cfg = nanogpt.GPTConfig(block_size=8, vocab_size=32, n_layer=2, n_head=2, n_embd=16,
                                bias=False)
        model = nanogpt.GPT(cfg)
        model.lm_head.weight = nn.Parameter(model.lm_head.weight.detach().clone())
        opt = model.configure_optimizers(0.1, 3e-3, (0.9, 0.95))
        idx, targets = common.random_batches(3, 2, 8, 32)
        self.compile_and_compare(model, opt, {"idx": idx, "targets": targets}, 3)

    def test_embedding_repeated_ids(self):
        """The embedding backward (index_put with accumulate) with every id
        repeated, within rows and across them: the scatter-add sums each
        occurrence (the AdamW moments after the steps are linear in the
        gradients, so a lost or doubled occurrence is out of budget). It is
        an scf.forall over the table's columns, O(tokens x d): no loop nest
        over the vocabulary and the tokens."""

        class Bag(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(40, 6)
                self.head = nn.Linear(6, 3)

            def forward(self, idx, y):
                return F.cross_entropy(self.head(self.emb(idx)).flatten(0, 1), y.flatten())

        torch.manual_seed(4)
        model = Bag()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        g = torch.Generator().manual_seed(6)
        few = torch.tensor([0, 7, 39])
        idx = few[torch.randint(0, 3, (3, 4, 5), generator=g)]
        idx[:, 0, :] = 7  # one id in every position of a row
        batches = {"idx": idx, "y": torch.randint(0, 3, (3, 4, 5), generator=g)}
        text = export_step(model, opt, {k: v[0] for k, v in batches.items()}).mlir
        self.assertRegex(text, r"scf\.forall \(%\w+\) in \(6\) shared_outs\(.*\) -> "
                               r"\(tensor<40x6xf32>\)")
        self.assertRegex(text, r"tensor\.extract %\w+\[%t\d+, %t\d+\] : tensor<4x5xi64>")
        self.assertNotRegex(text, r'"parallel", "parallel", "reduction", "reduction"')
        self.compile_and_compare(model, opt, batches, 3)

    def test_other_ops(self):
        """An MLP and a head that use the ops GPT does not: relu, sigmoid,
        erf GELU, softmax, mean, mse, slicing, cat, clamp, where."""

        class Zoo(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(6, 12)
                self.fc2 = nn.Linear(12, 6)
                self.norm = nn.LayerNorm(6)

            def forward(self, x, y):
                h = F.relu(self.fc1(x))
                a, b = h[:, :6], h[:, 6:]
                h = torch.cat([torch.sigmoid(a) * 2.0, F.gelu(b)], dim=1)
                h = self.fc2(h).clamp(-3.0, 3.0)
                p = torch.softmax(h, dim=-1)
                h = self.norm(h + p.mean(dim=0, keepdim=True))
                h = torch.where(h > 0, h, 0.5 * h)
                return F.mse_loss(h.sum(dim=-1), y) + 0.1 * h.pow(2).mean()

        torch.manual_seed(3)
        model = Zoo()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
        g = torch.Generator().manual_seed(5)
        batches = {"x": torch.randn(3, 4, 6, generator=g), "y": torch.randn(3, 4, generator=g)}
        self.compile_and_compare(model, opt, batches, 3)

    def test_derived_buffers_and_constants(self):
        """Non-persistent buffers (float, bool, integer) and tensor constants
        of the forward (torch.tensor, an empty 1-d tensor in cat, as a
        key/value cache starts) are folded with their exact values;
        constant_pad_nd pads and crops."""

        class Folded(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(6, 6)
                self.register_buffer("freq", torch.tensor([0.1, 1.0 / 3.0, 2.5, -7.0, 1e-3, 9.0]),
                                     persistent=False)
                self.register_buffer("mask", torch.tril(torch.ones(8, 8, dtype=torch.bool)),
                                     persistent=False)
                self.register_buffer("perm", torch.tensor([5, 0, 4, 1, 3, 2]), persistent=False)
                self.register_buffer("ones", torch.ones(6), persistent=False)

            def forward(self, x, y):
                t = x.shape[1]
                w = self.fc.weight[self.perm]  # rows permuted by an integer buffer
                h = F.linear(x, w, self.fc.bias) * self.freq * self.ones + \
                    torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
                s = h @ h.transpose(-1, -2)
                s = s.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1) @ h
                s = torch.cat([torch.tensor([]), s.reshape(-1)]).reshape(s.shape)
                p = F.pad(s, (1, -2), value=0.25)
                return F.mse_loss(p.sum(-1), y)

        torch.manual_seed(4)
        model = Folded()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        g = torch.Generator().manual_seed(6)
        batches = {"x": torch.randn(3, 2, 5, 6, generator=g),
                   "y": torch.randn(3, 2, 5, generator=g)}
        result = export_step(model, opt, {k: v[0] for k, v in batches.items()})
        self.assertIn("aten.constant_pad_nd.default", result.meta["ops"])
        self.assertNotIn("freq", "".join(result.weights))
        self.assertIn('arith.constant dense<"0x', result.mlir)
        self.compile_and_compare(model, opt, batches, 3)


class BadInputTest(unittest.TestCase):
    """Each case fails with a message naming the problem and where it is."""

    def adamw(self, model, **kw):
        return torch.optim.AdamW(model.parameters(), lr=1e-3, **kw)

    def expect(self, model, pattern, batch=None, opt=None, loss_fn=None):
        batch = batch or {"x": torch.randn(2, 4)}
        opt = opt or self.adamw(model)
        with self.assertRaises(ExportError) as cm:
            export_step(model, opt, batch, loss_fn)
        self.assertRegex(str(cm.exception), pattern)
        return str(cm.exception)

    def test_data_dependent_control_flow(self):
        class Branchy(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = nn.Linear(4, 4)

            def forward(self, x):
                h = self.inner(x)
                if h.sum() > 0:  # depends on values: not one graph
                    h = h * 2
                return h.pow(2).mean()

        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Branchy()

            def forward(self, x):
                return self.block(x)

        msg = self.expect(Outer(), r"data-dependent .* in module 'block'")
        self.assertIn("test_exporter.py", msg)  # the user's line

    def test_item_is_data_dependent(self):
        class Item(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.ones(4))

            def forward(self, x):
                return (x * self.w).sum() * float(x.max().item())
        self.expect(Item(), r"data-dependent")

    def test_unsupported_op_names_op_and_module(self):
        class Cum(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)

            def forward(self, x):
                return torch.cumsum(self.proj(x), dim=1).pow(2).mean()

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Cum()])

            def forward(self, x):
                return self.layers[0](x)

        msg = self.expect(Net(), r"^unsupported op aten\.cumsum\.default in module "
                          r"'layers\.0' \(Cum\) at \S*test_exporter\.py:\d+: ")
        self.assertTrue(msg.endswith("return torch.cumsum(self.proj(x), dim=1).pow(2).mean()"))

    def test_dropout_names_dropout(self):
        class Drop(nn.Module):
            def __init__(self, functional):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.drop = nn.Dropout(0.5)
                self.functional = functional

            def forward(self, x):
                h = self.fc(x)
                if self.functional:
                    return F.dropout(h, 0.25, training=self.training).pow(2).mean()
                return self.drop(h).pow(2).mean()
        fix = (r"dropout is random and an exported step is deterministic; set p=0, or "
               r"export the model in eval mode \(model\.eval\(\): dropout is the identity\)")
        self.expect(Drop(False), r"^dropout nn\.Dropout\(p=0\.5\) in module 'drop' "
                    r"\(Dropout\): " + fix + r" at \S*test_exporter\.py:\d+: "
                    r"return self\.drop\(h\)")
        self.expect(Drop(True), r"^dropout F\.dropout\(p=0\.25\) in module '' \(Drop\): "
                    + fix)
        # p=0, or eval mode: dropout is the identity and the step exports.
        drop0 = Drop(False)
        drop0.drop.p = 0.0
        for model in (drop0, Drop(False).eval(), Drop(True).eval()):
            export_step(model, self.adamw(model), {"x": torch.randn(2, 4)})

    def test_attention_dropout_names_dropout(self):
        class Attn(nn.Module):
            def __init__(self):
                super().__init__()
                self.qkv = nn.Linear(4, 12)

            def forward(self, x):
                q, k, v = self.qkv(x).view(1, 2, 3, 4).unbind(2)
                return F.scaled_dot_product_attention(q, k, v, dropout_p=0.1).sum()
        self.expect(Attn(), r"^dropout F\.scaled_dot_product_attention\(dropout_p=0\.1\) in "
                    r"module '' \(Attn\): .*; set dropout_p=0, ")

    def test_random_op(self):
        class Noisy(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return (self.fc(x) * torch.rand(4)).sum()
        self.expect(Noisy(), r"^random op aten\.rand\.default in module '' \(the root Noisy, "
                    r"or the loss function\): the exported step is deterministic")

    def test_too_large_constant(self):
        class Big(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.register_buffer("table", torch.arange(float(1 << 20) + 1), persistent=False)

            def forward(self, x):
                return (self.fc(x) * self.table[:4]).sum()
        self.expect(Big(), r"^tensor constant buffer 'table' \(shape \[1048577\]\) is too large to "
                    r"fold into the step \(1048577 elements, at most 1048576\) in module '': ")

    def test_mutated_derived_buffer(self):
        class Count(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.register_buffer("seen", torch.zeros(1), persistent=False)

            def forward(self, x):
                self.seen.add_(1)
                return self.fc(x).sum()
        self.expect(Count(), r"^the step mutates one of its inputs \(aten\.copy_\.default in module "
                    r"''\): parameters, buffers and batch tensors must not be changed in place")

    def test_exception_outside_the_modules(self):
        """An exception in the loss function (in a module: see
        CommandLineErrorTest.test_assertion_in_forward)."""
        self.expect(nn.Linear(4, 4), r"^tracing failed outside the model's forward \(in the "
                    r"loss function or the backward\): KeyError: 'y' at \S*test_exporter\.py",
                    loss_fn=lambda m, x: m(x).sum() + {}["y"])

    def test_loss_fn_must_be_callable(self):
        self.expect(nn.Linear(4, 4), r"^loss_fn must be callable or None, got int$", loss_fn=3)

    def test_persistent_buffers(self):
        """A persistent float32 buffer the step reads is a buffer argument
        (replicated, never updated), recorded as held by that argument in
        zshard.torch_state_dict and written to the weights with its values; a
        persistent integer buffer is folded and recorded with its bytes (so
        --save-torch writes both back; hf_checkpoint.py --mode buffers and
        buffer_model.py run them)."""
        class WithBuffer(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.register_buffer("scale", torch.tensor([0.5, 1.0, 2.0, 4.0]))
                self.register_buffer("version", torch.tensor([3, 1]))

            def forward(self, x):
                return (self.fc(x) * self.scale).pow(2).mean()
        m = WithBuffer()
        res = export_step(m, self.adamw(m), {"x": torch.randn(2, 4)})
        self.assertEqual(res.meta["state_dict"],
                         {"scale": "scale", "version": "buffer", "fc.weight": "fc.weight",
                          "fc.bias": "fc.bias"})
        self.assertEqual(res.meta["buffers"], {"scale": [4]})
        self.assertRegex(res.mlir, r'%arg2: tensor<4xf32> \{zshard.init = #zshard.init<normal\([^)]*\)>, '
                                   r'zshard.name = "scale", zshard.persistent = true, '
                                   r'zshard.role = #zshard.role<buffer>\}')
        results = res.mlir.split("->", 1)[1].split("attributes {", 1)[0]
        self.assertNotIn('"scale"', results)  # never updated: no result
        self.assertEqual(res.weights["scale"].tolist(), [0.5, 1.0, 2.0, 4.0])
        self.assertIn('{\\"name\\":\\"scale\\",\\"dtype\\":\\"F32\\",\\"shape\\":[4],'
                      '\\"param\\":\\"scale\\"}', res.mlir)
        self.assertIn('{\\"name\\":\\"version\\",\\"dtype\\":\\"I64\\",\\"shape\\":[2],'
                      '\\"data\\":\\"03000000000000000100000000000000\\"}', res.mlir)

    def test_persistent_buffers_the_step_changes_are_refused(self):
        self.expect(nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)),
                    r"^the model has a persistent buffer '1\.num_batches_tracked' \(shape \[\], "
                    r"int64\) in module '1' \(BatchNorm1d\) that the step changes "
                    r"\(aten\.copy_\.default\): it is state the training step would carry, and "
                    r"only buffers the step reads are folded into it; export the module in "
                    r"eval mode if its statistics stay fixed, or make it a parameter$",
                    loss_fn=lambda model, x: model(x).pow(2).mean())

    def test_optimizer_checks(self):
        m = nn.Linear(4, 1)
        lf = lambda model, x: model(x).pow(2).mean()  # noqa: E731
        self.expect(m, r"must be torch\.optim\.AdamW, got SGD",
                    opt=torch.optim.SGD(m.parameters(), lr=0.1), loss_fn=lf)
        self.expect(m, r"amsgrad=True", opt=self.adamw(m, amsgrad=True), loss_fn=lf)
        groups = [{"params": [m.weight], "lr": 1e-3}, {"params": [m.bias], "lr": 1e-2}]
        self.expect(m, r"different learning rates", opt=torch.optim.AdamW(groups), loss_fn=lf)
        self.expect(m, r"not in the optimizer: bias",
                    opt=torch.optim.AdamW([m.weight], lr=1e-3), loss_fn=lf)
        used = self.adamw(m)
        lf(m, torch.randn(2, 4)).backward()
        used.step()
        self.expect(m, r"already has state", opt=used, loss_fn=lf)

    def test_frozen_parameter(self):
        m = nn.Linear(4, 1)
        m.bias.requires_grad_(False)
        self.expect(m, r"'bias' does not require grad",
                    loss_fn=lambda model, x: model(x).pow(2).mean())

    def test_mutating_a_parameter(self):
        class Mut(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.ones(4))

            def forward(self, x):
                with torch.no_grad():
                    self.w.mul_(0.5)
                return (x * self.w).sum()
        self.expect(Mut(), r"mutates one of its inputs")

    def test_loss_must_be_scalar(self):
        self.expect(nn.Linear(4, 3), r"the loss must be a 0-d floating-point tensor",
                    loss_fn=lambda model, x: model(x))

    def test_cli_error_writes_nothing(self):
        script = os.path.join(tempfile.mkdtemp(), "bad.py")
        with open(script, "w") as f:
            f.write("import torch\n"
                    "def make():\n"
                    "    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))\n"
                    "    return m, torch.optim.AdamW(m.parameters()), {'x': torch.randn(2, 4)}, "
                    "lambda model, x: model(x).sum()\n")
        out = script + ".mlir"
        r = subprocess.run([os.path.join(common.ROOT, "tools", "zshard-export"), script + ":make",
                            "-o", out, "--weights", out + ".safetensors"],
                           capture_output=True, text=True,
                           env=dict(os.environ, ZSHARD_TORCH_VENV=os.path.dirname(
                               os.path.dirname(sys.executable))))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertRegex(r.stderr, r"^zshard-export: error: the model has a persistent buffer "
                         r"'1\.num_batches_tracked'")
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(out + ".safetensors"))

    def test_cli_writes_step_weights_and_meta(self):
        d = tempfile.mkdtemp()
        out = os.path.join(d, "s.mlir")
        r = subprocess.run([os.path.join(common.ROOT, "tools", "zshard-export"),
                            "zshard_export.examples.nanogpt:make", "--set", "layers=1",
                            "--set", "d_model=16", "--set", "vocab=32", "--set", "seq=8",
                            "-o", out, "--weights", os.path.join(d, "w.safetensors"),
                            "--meta", os.path.join(d, "m.json")],
                           capture_output=True, text=True,
                           env=dict(os.environ, ZSHARD_TORCH_VENV=os.path.dirname(
                               os.path.dirname(sys.executable))))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(d, "m.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["batch"]["idx"]["shape"], [4, 8])
        w = common.safetensors_io.load_file(os.path.join(d, "w.safetensors"))
        self.assertEqual(sorted(w), sorted(meta["params"]))
        with open(out) as f:
            self.assertEqual(verify(f.read()).returncode, 0)


EXPORTER = os.path.join(common.ROOT, "tools", "zshard-export")
VENV = os.path.dirname(os.path.dirname(sys.executable))

# A user's file for the command line's error tests: SPEC is model.py:NAME.
USER_FILE = """import torch
import torch.nn as nn


class Checked(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        assert x.shape[0] == 3, "need 3 rows"
        return self.fc(x).sum()


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Checked()
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.inner(self.drop(x))


def make(rows=3, drop=0.0):
    m = Outer()
    m.drop.p = drop
    return m, torch.optim.AdamW(m.parameters(), lr=0.01), {"x": torch.randn(rows, 4)}, None


def make_raise(**kw):
    raise ValueError("bad config")
"""


class CommandLineErrorTest(unittest.TestCase):
    """Bad input on the command line: exactly one line on stderr, exit 1,
    nothing written, no traceback."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        for name, text in (("model.py", USER_FILE), ("syntax.py", "def make(:\n    pass\n"),
                           ("imports.py", "import nosuch_module_xyz\n")):
            with open(os.path.join(cls.dir, name), "w") as f:
                f.write(text)

    def cli(self, *args, env=None):
        return subprocess.run([EXPORTER, *args], capture_output=True, text=True, cwd=self.dir,
                              env=dict(os.environ, ZSHARD_TORCH_VENV=VENV, **(env or {})))

    def expect(self, args, line, regex=False):
        out = os.path.join(self.dir, "out.mlir")
        if os.path.exists(out):
            os.unlink(out)
        r = self.cli(*args)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertTrue(r.stderr.endswith("\n"))
        if regex:
            self.assertRegex(r.stderr.rstrip("\n"), line)
        else:
            self.assertEqual(r.stderr.rstrip("\n"), line)
        self.assertFalse(os.path.exists(out))

    def test_unknown_keyword(self):
        self.expect(["zshard_export.examples.nanogpt:make", "--set", "bogus=1", "-o", "out.mlir"],
                    "zshard-export: error: --set bogus: make() has no parameter 'bogus' (it "
                    "takes: layers, heads, d_model, vocab, seq, batch, lr, seed, weight_decay)")

    def test_missing_module(self):
        self.expect(["nosuch.module:fn", "-o", "out.mlir"],
                    "zshard-export: error: no module named 'nosuch' (SPEC 'nosuch.module:fn': "
                    "MODULE must be importable from the Python path; a file is FILE.py:FUNCTION)")

    def test_missing_file_and_function(self):
        self.expect(["nosuch.py:make", "-o", "out.mlir"],
                    "zshard-export: error: no such file 'nosuch.py'")
        self.expect(["model.py:nosuch", "-o", "out.mlir"],
                    "zshard-export: error: 'model.py' has no function 'nosuch'")

    def test_file_that_does_not_import(self):
        self.expect(["syntax.py:make", "-o", "out.mlir"],
                    r"^zshard-export: error: cannot import 'syntax\.py': SyntaxError: .+ at "
                    r"syntax\.py:1$", regex=True)
        self.expect(["imports.py:make", "-o", "out.mlir"],
                    "zshard-export: error: cannot import 'imports.py': ModuleNotFoundError: No "
                    "module named 'nosuch_module_xyz' at imports.py:1: import nosuch_module_xyz")

    def test_unwritable_output(self):
        self.expect(["model.py:make", "-o", "nosuch/out.mlir"],
                    "zshard-export: error: -o 'nosuch/out.mlir': no such directory 'nosuch'")
        self.expect(["model.py:make", "-o", "."], "zshard-export: error: -o '.' is a directory")
        self.expect(["model.py:make", "-o", "out.mlir", "--weights", "."],
                    "zshard-export: error: --weights '.' is a directory")

    def test_assertion_in_forward(self):
        self.expect(["model.py:make", "--set", "rows=2", "-o", "out.mlir"],
                    "zshard-export: error: tracing failed in module 'inner' (Checked): "
                    "AssertionError: need 3 rows at model.py:11: "
                    "assert x.shape[0] == 3, \"need 3 rows\"")

    def test_exception_in_the_user_s_function(self):
        self.expect(["model.py:make_raise", "-o", "out.mlir"],
                    "zshard-export: error: model.py:make_raise raised ValueError: bad config at "
                    "model.py:32: raise ValueError(\"bad config\")")

    def test_dropout(self):
        self.expect(["model.py:make", "--set", "drop=0.1", "-o", "out.mlir"],
                    "zshard-export: error: dropout nn.Dropout(p=0.1) in module 'drop' (Dropout): "
                    "dropout is random and an exported step is deterministic; set p=0, or export "
                    "the model in eval mode (model.eval(): dropout is the identity) at "
                    "model.py:22: return self.inner(self.drop(x))")

    def test_usage_errors(self):
        self.expect(["model.py:make"], "zshard-export: error: the following arguments are "
                    "required: -o/--output (see --help)")
        self.expect(["model.py:make", "--set", "rows", "-o", "out.mlir"],
                    "zshard-export: error: --set 'rows' is not KEY=VALUE")

    def test_broken_torch(self):
        fake = os.path.join(self.dir, "fake", "torch")
        os.makedirs(fake, exist_ok=True)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("raise ImportError('broken torch')\n")
        r = self.cli("model.py:make", "-o", "out.mlir",
                     env={"PYTHONPATH": os.path.dirname(fake)})
        self.assertEqual((r.returncode, r.stderr),
                         (1, "zshard-export: error: cannot import torch (ImportError: broken "
                          "torch); the exporter runs in the venv scripts/setup-torch.sh makes\n"))

    def test_success_is_one_line_too(self):
        r = self.cli("model.py:make", "-o", "ok.mlir")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "zshard-export: ok.mlir: 2 parameters (20 elements), "
                         "lr 0.01, 7 distinct aten ops\n")

    def test_debug_shows_the_traceback(self):
        for args, env in ((["--debug"], None), ([], {"ZSHARD_EXPORT_DEBUG": "1"})):
            r = self.cli("model.py:make_raise", "-o", "out.mlir", *args, env=env)
            self.assertEqual(r.returncode, 1)
            self.assertIn("Traceback (most recent call last):", r.stderr)
            self.assertIn('raise ValueError("bad config")', r.stderr)

    def test_internal_error_is_one_line(self):
        """An exception the exporter did not expect: one line naming it, exit 1;
        --debug re-raises it."""
        import contextlib
        import io
        from unittest import mock

        from zshard_export import __main__ as cli
        spec = os.path.join(self.dir, "model.py") + ":make"
        out = os.path.join(self.dir, "internal.mlir")
        with mock.patch("zshard_export.export.export_step",
                        side_effect=RuntimeError("boom\nsecond line")):
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = cli.main([spec, "-o", out])
            self.assertEqual(rc, 1)
            self.assertEqual(err.getvalue(),
                             "zshard-export: internal error: RuntimeError: boom (please report)\n")
            with self.assertRaisesRegex(RuntimeError, "boom"):
                cli.main([spec, "-o", out, "--debug"])
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
