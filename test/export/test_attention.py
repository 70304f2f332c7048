"""Causal attention in exported steps: scaled_dot_product_attention(is_causal=
True) becomes zshard.causal_attention and its grad, with no [T, T] tensor in
the step; every other attention keeps the dense lowering; the custom ops'
formula equals torch's attention and its autograd gradients (float64).

The losses of such steps against torch eager: export.hf.*-sdpa
(hf_models.py) and export.fidelity.* (nanoGPT), which go through this path.
"""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from zshard_export import export_step  # noqa: E402
from zshard_export.examples import hf  # noqa: E402

torch.set_num_threads(1)
SEQ = 12  # differs from every other size of the models (heads 6 of 8, hidden 48)


def square(mlir):
    """The tensor types with two trailing SEQ dimensions: [.., T, T]."""
    return re.findall(rf"tensor<[0-9x]*{SEQ}x{SEQ}x[a-z0-9]+>", mlir)


class HuggingFaceSdpa(unittest.TestCase):
    def export(self, family, **kw):
        model, opt, batch, loss_fn = hf.make(family=family, attn="sdpa", seq=SEQ, **kw)
        return export_step(model, opt, batch, loss_fn).mlir

    def test_llama_gqa(self):
        mlir = self.export("llama")
        fwd = re.findall(r"zshard\.causal_attention (.*) loc\(\"([^\"]*)\"\)", mlir)
        self.assertEqual([loc for _, loc in fwd],
                         ["model.layers.0.self_attn", "model.layers.1.self_attn"])
        # Grouped-query: k and v enter with their 2 kv heads, not repeated to 6.
        for text, _ in fwd:
            self.assertTrue(text.endswith(f": tensor<2x6x{SEQ}x8xf32>, tensor<2x2x{SEQ}x8xf32>, "
                                          f"tensor<2x2x{SEQ}x8xf32>"), text)
            self.assertIn("scale(3.53553385e-01)", text)  # 8 ** -0.5 as f32
        grads = re.findall(r"zshard\.causal_attention_grad .* loc\(\"([^\"]*)\"\)", mlir)
        self.assertEqual(sorted(grads), ["model.layers.0.self_attn", "model.layers.1.self_attn"])
        self.assertEqual(square(mlir), [])

    def test_gpt2(self):
        mlir = self.export("gpt2")
        self.assertEqual(len(re.findall(r"zshard\.causal_attention ", mlir)), 2)
        self.assertEqual(len(re.findall(r"zshard\.causal_attention_grad ", mlir)), 2)
        self.assertEqual(square(mlir), [])

    def test_padding_mask_stays_dense(self):
        """A padding mask (a batch input) is not the causal mask: dense."""
        mlir = self.export("llama", mask=1)
        self.assertNotIn("zshard.causal_attention", mlir)
        self.assertNotEqual(square(mlir), [])

    def test_sliding_window_stays_dense(self):
        mlir = self.export("mistral", window=5)
        self.assertNotIn("zshard.causal_attention", mlir)
        self.assertNotEqual(square(mlir), [])

    def test_eager_stays_dense(self):
        model, opt, batch, loss_fn = hf.make(family="llama", attn="eager", seq=SEQ)
        mlir = export_step(model, opt, batch, loss_fn).mlir
        self.assertNotIn("zshard.causal_attention", mlir)


class Attn(nn.Module):
    """One attention over a projection, its sdpa call's arguments given."""

    def __init__(self, heads=2, kv=2, mask=None, **sdpa):
        super().__init__()
        self.heads, self.kv, self.sdpa = heads, kv, sdpa
        self.register_buffer("mask", mask, persistent=False)
        self.q = nn.Linear(8, heads * 4)
        self.k = nn.Linear(8, kv * 4)
        self.v = nn.Linear(8, kv * 4)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, 4).transpose(1, 2)
        k = self.k(x).view(b, t, self.kv, 4).transpose(1, 2)
        v = self.v(x).view(b, t, self.kv, 4).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask,
                                              **self.sdpa).square().mean()


class Matching(unittest.TestCase):
    def export(self, model):
        x = torch.randn(2, SEQ, 8)
        return export_step(model, torch.optim.AdamW(model.parameters()), {"x": x},
                           lambda m, x: m(x)).mlir

    def test_causal_with_scale_and_gqa(self):
        mlir = self.export(Attn(heads=4, kv=2, is_causal=True, scale=0.3, enable_gqa=True))
        self.assertRegex(mlir, rf"zshard\.causal_attention %\S+, %\S+, %\S+ scale\("
                               rf"3\.00000012e-01\) : tensor<2x4x{SEQ}x4xf32>, "
                               rf"tensor<2x2x{SEQ}x4xf32>")
        self.assertEqual(square(mlir), [])

    def test_others_stay_dense(self):
        mask = torch.ones(SEQ, SEQ, dtype=torch.bool).tril()
        for sdpa in ({}, {"is_causal": False}, {"mask": mask}, {"mask": torch.zeros(SEQ, SEQ)},
                     {"is_causal": True, "scale": -1.0}):
            with self.subTest(sdpa=sdpa):
                mlir = self.export(Attn(**sdpa))
                self.assertNotIn("zshard.causal_attention", mlir)
                self.assertNotEqual(square(mlir), [])


class OpFormula(unittest.TestCase):
    """torch.ops.zshard.causal_attention(_grad) in float64 against torch's
    causal sdpa and its autograd gradients, grouped-query (6 heads, 2 kv)."""

    def test_forward_and_backward(self):
        g = torch.Generator().manual_seed(0)
        q = torch.randn(2, 6, 7, 5, generator=g, dtype=torch.float64, requires_grad=True)
        k = torch.randn(2, 2, 7, 5, generator=g, dtype=torch.float64, requires_grad=True)
        v = torch.randn(2, 2, 7, 5, generator=g, dtype=torch.float64, requires_grad=True)
        dout = torch.randn(2, 6, 7, 5, generator=g, dtype=torch.float64)
        want = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7,
                                              enable_gqa=True)
        want_grads = torch.autograd.grad(want, (q, k, v), dout)
        out, lse = torch.ops.zshard.causal_attention(q, k, v, 0.7)
        grads = torch.autograd.grad(out, (q, k, v), dout)
        torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12)
        for got, ref in zip(grads, want_grads):
            torch.testing.assert_close(got, ref, rtol=1e-12, atol=1e-12)
        s = 0.7 * q.detach() @ k.detach().repeat_interleave(3, 1).transpose(-1, -2)
        s = s.masked_fill(torch.ones(7, 7, dtype=torch.bool).triu(1), float("-inf"))
        torch.testing.assert_close(lse, torch.logsumexp(s, -1), rtol=1e-12, atol=1e-12)


if __name__ == "__main__":
    unittest.main()
