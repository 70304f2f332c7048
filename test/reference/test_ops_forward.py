"""Forward semantics of the ops against plain loops written from docs/models.md,
and the dtype rule (float32 in, float32 out)."""

import math
import unittest

import numpy as np

import refutil  # noqa: F401  (import path)

from zshard_ref import ops


def naive_attention(qkv, heads):
    """Loops straight from docs/models.md."""
    bsz, t, d3 = qkv.shape
    d = d3 // 3
    dh = d // heads
    out = np.zeros((bsz, t, d))
    for b in range(bsz):
        for h in range(heads):
            cols = slice(h * dh, (h + 1) * dh)
            q = qkv[b, :, 0:d][:, cols]
            k = qkv[b, :, d:2 * d][:, cols]
            v = qkv[b, :, 2 * d:3 * d][:, cols]
            for i in range(t):
                scores = [sum(q[i, j] * k[u, j] for j in range(dh)) / math.sqrt(dh)
                          for u in range(i + 1)]  # u > i masked out
                mx = max(scores)
                e = [math.exp(s - mx) for s in scores]
                z = sum(e)
                for j in range(dh):
                    out[b, i, h * dh + j] = sum(e[u] / z * v[u, j] for u in range(i + 1))
    return out


class TestForward(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(99)

    def test_attention_matches_loops(self):
        qkv = self.rng.normal(size=(2, 5, 3 * 6))
        np.testing.assert_allclose(ops.causal_attention_forward(qkv, 3)[0],
                                   naive_attention(qkv, 3), rtol=1e-12, atol=1e-12)

    def test_attention_head_column_layout(self):
        # With H heads, perturbing head 1's k columns must leave head 0's output alone.
        d, heads = 8, 2
        qkv = self.rng.normal(size=(1, 4, 3 * d))
        base = ops.causal_attention_forward(qkv, heads)[0]
        moved = qkv.copy()
        moved[..., d + 4:d + 8] += self.rng.normal(size=(1, 4, 4))  # k of head 1
        out = ops.causal_attention_forward(moved, heads)[0]
        np.testing.assert_array_equal(out[..., 0:4], base[..., 0:4])
        self.assertGreater(np.abs(out[..., 4:8] - base[..., 4:8]).max(), 1e-3)

    def test_attention_is_causal(self):
        qkv = self.rng.normal(size=(1, 6, 12))
        base = ops.causal_attention_forward(qkv, 2)[0]
        moved = qkv.copy()
        moved[:, 4:] += 1.0
        out = ops.causal_attention_forward(moved, 2)[0]
        np.testing.assert_array_equal(out[:, :4], base[:, :4])
        # position 0 sees only itself: its output is its own v
        np.testing.assert_allclose(base[0, 0], qkv[0, 0, 8:12], rtol=1e-14)

    def test_layernorm_formula(self):
        x = self.rng.normal(size=(3, 5)) * 4.0 + 1.0
        w, b = self.rng.normal(size=5), self.rng.normal(size=5)
        y = ops.layernorm_forward(x, w, b)[0]
        for r in range(3):
            row = [float(v) for v in x[r]]
            mu = sum(row) / 5
            var = sum((v - mu) ** 2 for v in row) / 5  # biased
            for c in range(5):
                want = (row[c] - mu) / math.sqrt(var + 1e-5) * w[c] + b[c]
                self.assertAlmostEqual(y[r, c], want, places=12)

    def test_gelu_tanh_form(self):
        for v in (-4.0, -1.5, -0.3, 0.0, 0.7, 2.0, 5.0):
            want = 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
            got = float(ops.gelu_forward(np.array([v]))[0][0])
            self.assertAlmostEqual(got, want, places=14)
        # tanh form, not erf form: they differ at 1e-4 level around |x| ~ 2
        erf_form = 0.5 * 2.0 * (1 + math.erf(2.0 / math.sqrt(2)))
        self.assertGreater(abs(float(ops.gelu_forward(np.array([2.0]))[0][0]) - erf_form), 1e-5)

    def test_cross_entropy_formula(self):
        logits = self.rng.normal(size=(4, 6)) * 10.0  # large: needs the max shift
        labels = np.array([5, 0, 2, 2])
        got = float(ops.cross_entropy_forward(logits, labels)[0])
        terms = []
        for n in range(4):
            row = [float(v) for v in logits[n]]
            mx = max(row)
            lse = mx + math.log(sum(math.exp(v - mx) for v in row))
            terms.append(lse - row[labels[n]])
        self.assertAlmostEqual(got, sum(terms) / 4, places=12)
        with self.assertRaises(ValueError):
            ops.cross_entropy_forward(logits, np.array([0, 6, 1, 1]))

    def test_mse_formula(self):
        y = np.array([[1.0, 2.0], [3.0, -1.0]])
        t = np.array([[0.0, 2.5], [1.0, 1.0]])
        self.assertAlmostEqual(float(ops.mse_forward(y, t)[0]), (1 + 0.25 + 4 + 4) / 4)

    def test_embedding_and_linear_values(self):
        table = np.arange(12.0).reshape(4, 3)
        out = ops.embedding_forward(table, np.array([[3, 0]]))[0]
        np.testing.assert_array_equal(out, [[[9, 10, 11], [0, 1, 2]]])
        with self.assertRaises(ValueError):
            ops.embedding_forward(table, np.array([4]))
        x = np.array([[1.0, 2.0]])
        w = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 3.0]])  # [in=2, out=3]
        np.testing.assert_array_equal(ops.linear_forward(x, w, np.array([0.5, 0, 0]))[0],
                                      [[1.5, 2.0, 8.0]])

    def test_float32_stays_float32(self):
        f = np.float32
        x = self.rng.normal(size=(2, 3, 4)).astype(f)
        w = self.rng.normal(size=(4, 4)).astype(f)
        v = self.rng.normal(size=4).astype(f)
        y, c = ops.linear_forward(x, w, v)
        self.assertEqual([a.dtype for a in ops.linear_backward(y, c)], [f, f, f])
        y, c = ops.layernorm_forward(x, v, v)
        self.assertEqual(y.dtype, f)
        self.assertEqual([a.dtype for a in ops.layernorm_backward(y, c)], [f, f, f])
        y, c = ops.gelu_forward(x)
        self.assertEqual((y.dtype, ops.gelu_backward(y, c).dtype), (f, f))
        qkv = self.rng.normal(size=(2, 3, 12)).astype(f)
        y, c = ops.causal_attention_forward(qkv, 2)
        self.assertEqual((y.dtype, ops.causal_attention_backward(y, c).dtype), (f, f))
        loss, c = ops.cross_entropy_forward(x[0], np.array([0, 1, 3]))
        self.assertEqual((loss.dtype, ops.cross_entropy_backward(1.0, c).dtype), (f, f))
        loss, c = ops.mse_forward(x, x * f(0.5))
        self.assertEqual((loss.dtype, ops.mse_backward(1.0, c).dtype), (f, f))
        t, c = ops.embedding_forward(w, np.array([1, 1]))
        self.assertEqual((t.dtype, ops.embedding_backward(t, c).dtype), (f, f))


if __name__ == "__main__":
    unittest.main()
