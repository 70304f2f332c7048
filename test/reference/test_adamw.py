"""AdamW: a hand-computed scalar case and torch.optim.AdamW's own formulation."""

import math
import unittest

import numpy as np

import refutil  # noqa: F401  (import path)

from zshard_ref.adamw import AdamWConfig, adamw_step, adamw_update, clip_coefficient


def torch_adamw(params, grads_per_step, lrs, beta1, beta2, eps, wd):
    """The arithmetic of torch.optim.AdamW's single-tensor path (non-capturable),
    written with Python floats, element by element; wd only for rank >= 2 as
    docs/models.md says (torch would take that from the param groups)."""
    state = {n: ([0.0] * np.size(p), [0.0] * np.size(p)) for n, p in params.items()}
    cur = {n: [float(v) for v in np.ravel(p)] for n, p in params.items()}
    for step, (grads, lr) in enumerate(zip(grads_per_step, lrs), start=1):
        for name, p in cur.items():
            m, v = state[name]
            g = [float(x) for x in np.ravel(grads[name])]
            decay = wd if np.ndim(params[name]) >= 2 else 0.0
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = math.sqrt(bias_correction2)
            for i in range(len(p)):
                p[i] *= 1 - lr * decay                         # param.mul_(1 - lr * wd)
                m[i] += (g[i] - m[i]) * (1 - beta1)            # exp_avg.lerp_(grad, 1 - beta1)
                v[i] = v[i] * beta2 + (1 - beta2) * g[i] * g[i]
                denom = math.sqrt(v[i]) / bias_correction2_sqrt + eps
                p[i] += -step_size * m[i] / denom              # param.addcdiv_(m, denom, -step_size)
    return ({n: np.array(p).reshape(np.shape(params[n])) for n, p in cur.items()},
            {n: (np.array(m), np.array(v)) for n, (m, v) in state.items()})


class TestScalarByHand(unittest.TestCase):
    """lr 0.1, betas (0.9, 0.95), eps 1e-8; p0 = 1, g1 = 0.5, g2 = -0.25.

    step 1: m = 0.05, v = 0.0125, m_hat = 0.05/0.1 = 0.5, v_hat = 0.0125/0.05 = 0.25,
            update = 0.1 * 0.5 / (0.5 + 1e-8)
    step 2: m = 0.9*0.05 - 0.1*0.25 = 0.02, v = 0.95*0.0125 + 0.05*0.0625 = 0.015,
            m_hat = 0.02/0.19 = 2/19, v_hat = 0.015/0.0975 = 2/13,
            update = 0.1 * (2/19) / (sqrt(2/13) + 1e-8)
    with weight decay 0.1 the parameter is first multiplied by 1 - 0.1*0.1 = 0.99.
    """

    def run2(self, p0, wd, dtype=np.float64):
        cfg = AdamWConfig(beta1=0.9, beta2=0.95, eps=1e-8, weight_decay=wd)
        p = np.array(p0, dtype=dtype)
        m = np.zeros_like(p)
        v = np.zeros_like(p)
        out = []
        for step, g in ((1, 0.5), (2, -0.25)):
            p, m, v = adamw_update(p, np.full_like(p, g), m, v, 0.1, step, cfg)
            out.append((p.copy(), m.copy(), v.copy()))
        return out

    def test_with_weight_decay(self):
        (p1, m1, v1), (p2, m2, v2) = self.run2([[1.0]], 0.1)
        self.assertAlmostEqual(m1.item(), 0.05, places=15)
        self.assertAlmostEqual(v1.item(), 0.0125, places=15)
        self.assertAlmostEqual(p1.item(), 0.99 - 0.05 / (0.5 + 1e-8), places=14)
        self.assertAlmostEqual(p1.item(), 0.890000002, places=14)
        self.assertAlmostEqual(m2.item(), 0.02, places=15)
        self.assertAlmostEqual(v2.item(), 0.015, places=15)
        want = 0.99 * 0.890000002 - 0.1 * (2 / 19) / (math.sqrt(2 / 13) + 1e-8)
        self.assertAlmostEqual(p2.item(), want, places=14)
        self.assertAlmostEqual(p2.item(), 0.8542630578558273, places=13)

    def test_without_weight_decay(self):
        (p1, _, _), (p2, _, _) = self.run2([[1.0]], 0.0)
        self.assertAlmostEqual(p1.item(), 0.900000002, places=14)
        want = 0.900000002 - 0.1 * (2 / 19) / (math.sqrt(2 / 13) + 1e-8)
        self.assertAlmostEqual(p2.item(), want, places=14)
        self.assertAlmostEqual(p2.item(), 0.8731630578758274, places=13)

    def test_rank_one_and_zero_params_are_not_decayed(self):
        for p0 in ([1.0], 1.0):
            (p1, _, _), (p2, _, _) = self.run2(p0, 0.1)
            self.assertAlmostEqual(np.ravel(p2)[0], 0.8731630578758274, places=13)

    def test_float32(self):
        (_, _, _), (p2, m2, v2) = self.run2([[1.0]], 0.1, np.float32)
        self.assertEqual((p2.dtype, m2.dtype, v2.dtype), (np.float32,) * 3)
        self.assertAlmostEqual(p2.item(), 0.8542630578558273, delta=2e-7)

    def test_step_is_one_based(self):
        p = np.ones((2, 2))
        with self.assertRaises(ValueError):
            adamw_update(p, p, p * 0, p * 0, 0.1, 0)


class TestTorchSemantics(unittest.TestCase):
    def test_matches_torch_formulation_over_steps(self):
        rng = np.random.default_rng(21)
        params = {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=(4,)),
                  "wte": rng.normal(size=(2, 2, 2))}
        grads = [{n: rng.normal(size=p.shape) * 10 ** rng.uniform(-3, 1)
                  for n, p in params.items()} for _ in range(6)]
        grads[3]["b"][:] = 0.0  # zero gradient: decay and the momentum still act
        lrs = [1e-3, 3e-3, 1e-2, 1e-2, 5e-3, 0.0]
        cfg = AdamWConfig(beta1=0.8, beta2=0.99, eps=1e-6, weight_decay=0.2)
        want_p, want_s = torch_adamw(params, grads, lrs, cfg.beta1, cfg.beta2, cfg.eps,
                                     cfg.weight_decay)
        p, state = params, None
        for step, (g, lr) in enumerate(zip(grads, lrs), start=1):
            p, state = adamw_step(p, g, state, lr, step, cfg, dtype=np.float64)
        for n in params:
            np.testing.assert_allclose(p[n], want_p[n], rtol=1e-12, atol=1e-14, err_msg=n)
            np.testing.assert_allclose(state[n + ".exp_avg"].ravel(), want_s[n][0],
                                       rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(state[n + ".exp_avg_sq"].ravel(), want_s[n][1],
                                       rtol=1e-12, atol=1e-15)

    def test_weight_decay_only_for_rank_two_and_up(self):
        rng = np.random.default_rng(22)
        params = {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=(4,)),
                  "s": np.array(0.7), "t": rng.normal(size=(2, 1, 2))}
        grads = {n: rng.normal(size=np.shape(p)) for n, p in params.items()}
        with_wd, _ = adamw_step(params, grads, None, 1e-2, 1, AdamWConfig(weight_decay=0.5),
                                dtype=np.float64)
        without, _ = adamw_step(params, grads, None, 1e-2, 1, AdamWConfig(weight_decay=0.0),
                                dtype=np.float64)
        for n in ("b", "s"):
            np.testing.assert_array_equal(with_wd[n], without[n], err_msg=n)
        for n in ("w", "t"):
            np.testing.assert_allclose(with_wd[n], without[n] - 1e-2 * 0.5 * params[n],
                                       rtol=0, atol=1e-15, err_msg=n)

    def test_defaults(self):
        cfg = AdamWConfig()
        self.assertEqual((cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay),
                         (0.9, 0.95, 1e-8, 0.1))

    def test_state_must_match(self):
        params = {"w": np.ones((2, 2), np.float32)}
        g = {"w": np.ones((2, 2), np.float32)}
        with self.assertRaisesRegex(ValueError, "w.exp_avg_sq"):
            adamw_step(params, g, {"w.exp_avg": np.zeros((2, 2))}, 1e-3, 1)
        with self.assertRaisesRegex(ValueError, "shape"):
            adamw_step(params, g, {"w.exp_avg": np.zeros((2, 2)),
                                   "w.exp_avg_sq": np.zeros((4,))}, 1e-3, 1)


class GradClipTest(unittest.TestCase):
    """Global gradient-norm clipping as torch.nn.utils.clip_grad_norm_ (2-norm)."""

    def test_hand_computed(self):
        # ||(3, 4, 12)|| = 13: clipping to 6.5 halves every gradient.
        grads = {"a": np.array([3.0, 4.0]), "b": np.array([[12.0]])}
        self.assertAlmostEqual(clip_coefficient(grads, 6.5, np.float64),
                               6.5 / (13.0 + 1e-6), places=15)
        # Below the bound nothing changes (the coefficient is clamped to 1).
        self.assertEqual(clip_coefficient(grads, 100.0, np.float64), 1.0)

    def test_clipped_norm_is_the_bound(self):
        rng = np.random.default_rng(5)
        grads = {"w": rng.normal(size=(5, 7)), "b": rng.normal(size=(7,))}
        c = clip_coefficient(grads, 0.25, np.float64)
        norm = math.sqrt(sum(float(np.sum((g * c) ** 2)) for g in grads.values()))
        self.assertAlmostEqual(norm, 0.25, places=6)

    def test_update_uses_clipped_gradients(self):
        rng = np.random.default_rng(6)
        params = {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=(4,))}
        grads = {n: rng.normal(size=np.shape(p)) for n, p in params.items()}
        c = clip_coefficient(grads, 0.1, np.float64)
        self.assertLess(c, 1.0)
        clipped, clipped_state = adamw_step(params, grads, None, 1e-2, 1, dtype=np.float64,
                                            max_grad_norm=0.1)
        scaled = {n: g * c for n, g in grads.items()}
        want, want_state = adamw_step(params, scaled, None, 1e-2, 1, dtype=np.float64)
        for n in params:
            np.testing.assert_allclose(clipped[n], want[n], rtol=1e-14, err_msg=n)
            np.testing.assert_allclose(clipped_state[n + ".exp_avg"],
                                       want_state[n + ".exp_avg"], rtol=1e-14, err_msg=n)

    def test_bad_bound(self):
        with self.assertRaisesRegex(ValueError, "max_norm"):
            clip_coefficient({"w": np.ones(2)}, -1.0)


if __name__ == "__main__":
    unittest.main()
