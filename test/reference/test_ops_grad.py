"""Finite-difference checks (float64, central differences) of every op's
hand-written backward."""

import unittest

import numpy as np

from refutil import TOL, numeric_grad, projection, rel_err

from zshard_ref import ops


class GradCase(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(1234)

    def assertGradClose(self, analytic, numeric, what):
        self.assertEqual(np.shape(analytic), np.shape(numeric), what)
        self.assertGreater(np.linalg.norm(numeric), 1e-6, f"{what}: vacuous check, zero gradient")
        err = rel_err(analytic, numeric)
        self.assertLess(err, TOL, f"{what}: relative error {err:.3e}")


class TestChecker(GradCase):
    def test_checker_detects_a_wrong_gradient(self):
        x = self.rng.normal(size=(3, 4))
        numeric = numeric_grad(lambda: np.sum(np.sin(x)), x)
        np.testing.assert_allclose(numeric, np.cos(x), rtol=1e-7, atol=1e-9)
        self.assertLess(rel_err(np.cos(x), numeric), 1e-8)
        self.assertGreater(rel_err(1.01 * np.cos(x), numeric), TOL)
        wrong = np.cos(x).copy()
        wrong[1, 2] += 0.1
        self.assertGreater(rel_err(wrong, numeric), TOL)


class TestEmbedding(GradCase):
    def test_table_gradient_with_repeated_indices(self):
        table = self.rng.normal(size=(7, 3))
        idx = np.array([[0, 3, 3], [6, 0, 3]])  # 3 thrice, 0 twice, some rows unused
        r = projection(self.rng, (2, 3, 3))
        out, cache = ops.embedding_forward(table, idx)
        analytic = ops.embedding_backward(r, cache)
        numeric = numeric_grad(lambda: np.sum(ops.embedding_forward(table, idx)[0] * r), table)
        self.assertGradClose(analytic, numeric, "embedding dtable")
        np.testing.assert_allclose(analytic[3], r[0, 1] + r[0, 2] + r[1, 2])
        np.testing.assert_array_equal(analytic[[1, 2, 4, 5]], 0.0)


class TestMatmulLinear(GradCase):
    def check_matmul(self, a_shape, b_shape):
        a, b = self.rng.normal(size=a_shape), self.rng.normal(size=b_shape)
        out, cache = ops.matmul_forward(a, b)
        r = projection(self.rng, out.shape)
        da, db = ops.matmul_backward(r, cache)
        f = lambda: np.sum(ops.matmul_forward(a, b)[0] * r)
        self.assertGradClose(da, numeric_grad(f, a), f"matmul da {a_shape}x{b_shape}")
        self.assertGradClose(db, numeric_grad(f, b), f"matmul db {a_shape}x{b_shape}")

    def test_matmul_2d(self):
        self.check_matmul((3, 4), (4, 5))

    def test_matmul_batched(self):
        self.check_matmul((2, 3, 3, 4), (2, 3, 4, 2))

    def test_matmul_batched_a_shared_b(self):
        self.check_matmul((2, 3, 4), (4, 5))

    def check_linear(self, x_shape, n_out, bias):
        x = self.rng.normal(size=x_shape)
        w = self.rng.normal(size=(x_shape[-1], n_out))
        b = self.rng.normal(size=(n_out,)) if bias else None
        y, cache = ops.linear_forward(x, w, b)
        self.assertEqual(y.shape, x_shape[:-1] + (n_out,))
        r = projection(self.rng, y.shape)
        dx, dw, db = ops.linear_backward(r, cache)
        f = lambda: np.sum(ops.linear_forward(x, w, b)[0] * r)
        self.assertGradClose(dx, numeric_grad(f, x), "linear dx")
        self.assertGradClose(dw, numeric_grad(f, w), "linear dw")
        if bias:
            self.assertGradClose(db, numeric_grad(f, b), "linear db")
        else:
            self.assertIsNone(db)

    def test_linear_2d_with_bias(self):
        self.check_linear((4, 3), 5, True)

    def test_linear_3d_with_bias(self):
        self.check_linear((2, 3, 4), 6, True)

    def test_linear_without_bias(self):
        self.check_linear((2, 3, 4), 5, False)


class TestLayerNorm(GradCase):
    def test_gradients(self):
        x = self.rng.normal(size=(2, 3, 6)) * 2.0 + 0.5
        w = self.rng.normal(size=(6,))
        b = self.rng.normal(size=(6,))
        y, cache = ops.layernorm_forward(x, w, b)
        r = projection(self.rng, y.shape)
        dx, dw, db = ops.layernorm_backward(r, cache)
        f = lambda: np.sum(ops.layernorm_forward(x, w, b)[0] * r)
        self.assertGradClose(dx, numeric_grad(f, x), "layernorm dx")
        self.assertGradClose(dw, numeric_grad(f, w), "layernorm dw")
        self.assertGradClose(db, numeric_grad(f, b), "layernorm db")

    def test_small_variance_rows(self):
        # eps matters when the row variance is comparable to it.
        x = self.rng.normal(size=(3, 5)) * 3e-3
        w, b = self.rng.normal(size=(5,)), self.rng.normal(size=(5,))
        y, cache = ops.layernorm_forward(x, w, b)
        r = projection(self.rng, y.shape)
        dx, _, _ = ops.layernorm_backward(r, cache)
        f = lambda: np.sum(ops.layernorm_forward(x, w, b)[0] * r)
        self.assertGradClose(dx, numeric_grad(f, x, h=1e-8), "layernorm dx, small variance")


class TestAttention(GradCase):
    def check(self, bsz, t, d, heads):
        qkv = self.rng.normal(size=(bsz, t, 3 * d))
        o, cache = ops.causal_attention_forward(qkv, heads)
        self.assertEqual(o.shape, (bsz, t, d))
        r = projection(self.rng, o.shape)
        dqkv = ops.causal_attention_backward(r, cache)
        f = lambda: np.sum(ops.causal_attention_forward(qkv, heads)[0] * r)
        numeric = numeric_grad(f, qkv)
        self.assertGradClose(dqkv, numeric, f"attention dqkv B{bsz} T{t} D{d} H{heads}")
        for part, sl in (("q", slice(0, d)), ("k", slice(d, 2 * d)), ("v", slice(2 * d, 3 * d))):
            self.assertGradClose(dqkv[..., sl], numeric[..., sl], f"attention d{part}")

    def test_multi_head(self):
        self.check(2, 4, 6, 3)

    def test_single_head(self):
        self.check(1, 5, 4, 1)

    def test_first_position_query_has_no_gradient(self):
        # Position 0 attends only to itself: p = 1 whatever q_0 is.
        qkv = self.rng.normal(size=(1, 3, 12))
        o, cache = ops.causal_attention_forward(qkv, 2)
        dqkv = ops.causal_attention_backward(np.ones_like(o), cache)
        np.testing.assert_allclose(dqkv[0, 0, 0:4], 0.0, atol=1e-15)
        self.assertGreater(np.abs(dqkv[0, 1:, 0:4]).max(), 1e-3)


class TestGelu(GradCase):
    def test_gradient(self):
        x = np.concatenate([self.rng.normal(size=20) * 2.0, [-6.0, -3.0, 0.0, 3.0, 6.0]])
        y, cache = ops.gelu_forward(x)
        r = projection(self.rng, y.shape)
        dx = ops.gelu_backward(r, cache)
        self.assertGradClose(dx, numeric_grad(lambda: np.sum(ops.gelu_forward(x)[0] * r), x),
                             "gelu dx")


class TestLosses(GradCase):
    def test_cross_entropy(self):
        logits = self.rng.normal(size=(5, 4)) * 3.0
        labels = np.array([0, 3, 3, 1, 2])
        loss, cache = ops.cross_entropy_forward(logits, labels)
        self.assertEqual(np.shape(loss), ())
        for dloss in (1.0, 0.37):
            dlogits = ops.cross_entropy_backward(dloss, cache)
            numeric = numeric_grad(
                lambda: dloss * ops.cross_entropy_forward(logits, labels)[0], logits)
            self.assertGradClose(dlogits, numeric, f"cross-entropy dlogits (dloss {dloss})")

    def test_mse(self):
        y, target = self.rng.normal(size=(3, 4)), self.rng.normal(size=(3, 4))
        loss, cache = ops.mse_forward(y, target)
        dy = ops.mse_backward(1.0, cache)
        f = lambda: ops.mse_forward(y, target)[0]
        self.assertGradClose(dy, numeric_grad(f, y), "mse dy")
        self.assertGradClose(-dy, numeric_grad(f, target), "mse dtarget")


if __name__ == "__main__":
    unittest.main()
