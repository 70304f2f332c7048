"""Whole-model checks: finite differences of the loss with respect to every
parameter (float64), an independent loop forward of the gpt, tied versus untied
heads, and the float32 training step."""

import math
import unittest

import numpy as np

from refutil import TOL, numeric_grad, rel_err

from zshard_ref import GptConfig, MlpConfig, loss_and_grads, param_specs, train_step
from zshard_ref import gpt as gpt_model


def random_params(cfg, rng, scale=0.4):
    """Well-conditioned float64 params: everything random (LN weights near 1),
    so no path is trivially zero."""
    params = {}
    for name, shape, init in param_specs(cfg):
        params[name] = rng.normal(size=shape) * (0.3 if init != "normal" else scale)
        if init == "ones":
            params[name] += 1.0
    return params


def gpt_batch(cfg, rng, bsz):
    return {"tokens": rng.integers(0, cfg.vocab, size=(bsz, cfg.seq)).astype(np.int32),
            "targets": rng.integers(0, cfg.vocab, size=(bsz, cfg.seq)).astype(np.int32)}


def mlp_batch(cfg, rng, bsz):
    batch = {"x": rng.normal(size=(bsz, cfg.widths[0]))}
    if cfg.loss == "mse":
        batch["target"] = rng.normal(size=(bsz, cfg.widths[-1]))
    else:
        batch["labels"] = rng.integers(0, cfg.widths[-1], size=bsz).astype(np.int32)
    return batch


def naive_gpt_loss(cfg, p, tokens, targets):
    """docs/models.md's gpt forward with explicit loops where layout matters."""
    bsz, t = tokens.shape
    d, heads = cfg.d_model, cfg.heads
    dh = d // heads

    def ln(x, w, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * w + b

    def gelu(x):
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

    x = np.zeros((bsz, t, d))
    for b in range(bsz):
        for i in range(t):
            x[b, i] = p["wte"][tokens[b, i]] + p["wpe"][i]
    for layer in range(cfg.layers):
        pre = f"h.{layer}."
        a = ln(x, p[pre + "ln_1.weight"], p[pre + "ln_1.bias"])
        qkv = a @ p[pre + "attn.c_attn.weight"] + p[pre + "attn.c_attn.bias"]
        o = np.zeros((bsz, t, d))
        for b in range(bsz):
            for h in range(heads):
                q = qkv[b, :, 0 * d + h * dh:0 * d + (h + 1) * dh]
                k = qkv[b, :, 1 * d + h * dh:1 * d + (h + 1) * dh]
                v = qkv[b, :, 2 * d + h * dh:2 * d + (h + 1) * dh]
                for i in range(t):
                    s = np.array([q[i] @ k[u] / math.sqrt(dh) for u in range(i + 1)])
                    e = np.exp(s - s.max())
                    o[b, i, h * dh:(h + 1) * dh] = (e / e.sum()) @ v[:i + 1]
        x = x + o @ p[pre + "attn.c_proj.weight"] + p[pre + "attn.c_proj.bias"]
        m = ln(x, p[pre + "ln_2.weight"], p[pre + "ln_2.bias"])
        f = gelu(m @ p[pre + "mlp.c_fc.weight"] + p[pre + "mlp.c_fc.bias"])
        x = x + f @ p[pre + "mlp.c_proj.weight"] + p[pre + "mlp.c_proj.bias"]
    x = ln(x, p["ln_f.weight"], p["ln_f.bias"])
    head = p["wte"].T if cfg.tied else p["lm_head.weight"]
    total = 0.0
    for b in range(bsz):
        for i in range(t):
            logits = x[b, i] @ head
            mx = logits.max()
            total += mx + math.log(np.exp(logits - mx).sum()) - logits[targets[b, i]]
    return total / (bsz * t)


class ModelGradCase(unittest.TestCase):
    def check_all_params(self, cfg, params, batch):
        loss, grads = loss_and_grads(cfg, params, batch, dtype=np.float64)
        self.assertEqual(loss.dtype, np.float64)
        self.assertEqual(set(grads), set(params))
        f = lambda: loss_and_grads(cfg, params, batch, dtype=np.float64)[0]
        for name, _, _ in param_specs(cfg):
            numeric = numeric_grad(f, params[name])
            self.assertGreater(np.linalg.norm(numeric), 1e-7, f"{name}: zero gradient")
            err = rel_err(grads[name], numeric)
            self.assertLess(err, TOL, f"{cfg}: d loss / d {name}: relative error {err:.3e}")


class TestMlp(ModelGradCase):
    def test_mse_gradients(self):
        rng = np.random.default_rng(5)
        cfg = MlpConfig((3, 5, 4, 2), "mse")
        self.check_all_params(cfg, random_params(cfg, rng), mlp_batch(cfg, rng, 4))

    def test_xent_gradients(self):
        rng = np.random.default_rng(6)
        cfg = MlpConfig((4, 6, 3), "xent")
        self.check_all_params(cfg, random_params(cfg, rng, scale=1.0), mlp_batch(cfg, rng, 5))

    def test_single_layer_is_linear(self):
        rng = np.random.default_rng(7)
        cfg = MlpConfig((3, 2), "mse")
        p = random_params(cfg, rng)
        batch = mlp_batch(cfg, rng, 4)
        loss, _ = loss_and_grads(cfg, p, batch, dtype=np.float64)
        y = batch["x"] @ p["fc.0.weight"] + p["fc.0.bias"]
        self.assertAlmostEqual(float(loss), float(((y - batch["target"]) ** 2).mean()), places=12)

    def test_hidden_layers_use_gelu_and_last_does_not(self):
        cfg = MlpConfig((1, 1, 1), "mse")
        p = {"fc.0.weight": np.array([[2.0]]), "fc.0.bias": np.array([-0.5]),
             "fc.1.weight": np.array([[-3.0]]), "fc.1.bias": np.array([0.25])}
        batch = {"x": np.array([[0.8]]), "target": np.array([[0.1]])}
        h = 1.1
        g = 0.5 * h * (1 + math.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h ** 3)))
        y = -3.0 * g + 0.25
        loss, _ = loss_and_grads(cfg, p, batch, dtype=np.float64)
        self.assertAlmostEqual(float(loss), (y - 0.1) ** 2, places=12)


class TestGpt(ModelGradCase):
    def cfg(self, tied):
        return GptConfig(layers=2, d_model=8, heads=2, vocab=7, seq=4, tied=tied)

    def test_untied_gradients(self):
        rng = np.random.default_rng(11)
        cfg = self.cfg(False)
        self.check_all_params(cfg, random_params(cfg, rng), gpt_batch(cfg, rng, 2))

    def test_tied_gradients(self):
        rng = np.random.default_rng(12)
        cfg = self.cfg(True)
        self.assertNotIn("lm_head.weight", [n for n, _, _ in param_specs(cfg)])
        self.check_all_params(cfg, random_params(cfg, rng), gpt_batch(cfg, rng, 2))

    def test_forward_matches_loops(self):
        rng = np.random.default_rng(13)
        for tied in (False, True):
            cfg = GptConfig(layers=2, d_model=6, heads=3, vocab=9, seq=4, tied=tied)
            p = random_params(cfg, rng)
            batch = gpt_batch(cfg, rng, 2)
            loss, _ = loss_and_grads(cfg, p, batch, dtype=np.float64)
            want = naive_gpt_loss(cfg, p, batch["tokens"], batch["targets"])
            self.assertAlmostEqual(float(loss), want, places=11, msg=f"tied={tied}")

    def test_tied_equals_untied_with_transposed_head(self):
        rng = np.random.default_rng(14)
        tied, untied = self.cfg(True), self.cfg(False)
        p = random_params(tied, rng)
        q = dict(p, **{"lm_head.weight": p["wte"].T.copy()})
        batch = gpt_batch(tied, rng, 2)
        lt, gt = loss_and_grads(tied, p, batch, dtype=np.float64)
        lu, gu = loss_and_grads(untied, q, batch, dtype=np.float64)
        self.assertAlmostEqual(float(lt), float(lu), places=13)
        np.testing.assert_allclose(gt["wte"], gu["wte"] + gu["lm_head.weight"].T,
                                   rtol=1e-10, atol=1e-14)
        for name in gu:
            if name not in ("wte", "lm_head.weight"):
                np.testing.assert_allclose(gt[name], gu[name], rtol=1e-10, atol=1e-14)

    def test_key_bias_gradient_vanishes(self):
        # Softmax is shift invariant, so the k part of c_attn.bias gets no gradient.
        rng = np.random.default_rng(15)
        cfg = self.cfg(False)
        _, g = loss_and_grads(cfg, random_params(cfg, rng), gpt_batch(cfg, rng, 2),
                              dtype=np.float64)
        db = g["h.0.attn.c_attn.bias"]
        self.assertLess(np.abs(db[8:16]).max(), 1e-12)
        self.assertGreater(np.abs(db[0:8]).max(), 1e-4)
        self.assertGreater(np.abs(db[16:24]).max(), 1e-4)

    def test_prediction_at_t_ignores_later_tokens(self):
        rng = np.random.default_rng(16)
        cfg = GptConfig(layers=2, d_model=8, heads=2, vocab=11, seq=5)
        p = random_params(cfg, rng)
        batch = gpt_batch(cfg, rng, 1)
        probs = lambda b: gpt_model.forward(cfg, p, gpt_model.cast_batch(cfg, b, None))[1][-1][0]
        base = probs(batch)
        changed = {"tokens": batch["tokens"].copy(), "targets": batch["targets"]}
        changed["tokens"][0, 3] = (changed["tokens"][0, 3] + 1) % cfg.vocab
        moved = probs(changed)
        np.testing.assert_array_equal(moved[:3], base[:3])
        self.assertGreater(np.abs(moved[3:] - base[3:]).max(), 1e-6)

    def test_shorter_batch_uses_first_positions(self):
        rng = np.random.default_rng(17)
        cfg = GptConfig(layers=1, d_model=4, heads=2, vocab=5, seq=6)
        p = random_params(cfg, rng)
        batch = {k: v[:, :4] for k, v in gpt_batch(cfg, rng, 2).items()}
        loss, g = loss_and_grads(cfg, p, batch, dtype=np.float64)
        short = GptConfig(layers=1, d_model=4, heads=2, vocab=5, seq=4)
        q = dict(p, wpe=p["wpe"][:4])
        loss4, g4 = loss_and_grads(short, q, batch, dtype=np.float64)
        self.assertEqual(float(loss), float(loss4))
        np.testing.assert_array_equal(g["wpe"][4:], 0.0)
        np.testing.assert_array_equal(g["wpe"][:4], g4["wpe"])

    def test_initial_loss_is_log_vocab(self):
        from zshard_ref import init_params
        cfg = GptConfig(layers=2, d_model=16, heads=2, vocab=50, seq=8)
        p = init_params(cfg, seed=3)
        rng = np.random.default_rng(0)
        loss, _ = loss_and_grads(cfg, p, gpt_batch(cfg, rng, 2))
        self.assertAlmostEqual(float(loss), math.log(50), delta=0.05)


class TestTrainStep(unittest.TestCase):
    def setUp(self):
        from zshard_ref import init_params
        self.cfg = GptConfig(layers=2, d_model=8, heads=2, vocab=13, seq=6)
        self.params = init_params(self.cfg, seed=0)
        self.batch = gpt_batch(self.cfg, np.random.default_rng(1), 3)

    def test_float32_throughout_and_inputs_untouched(self):
        before = {k: v.copy() for k, v in self.params.items()}
        loss, newp, state = train_step(self.cfg, self.params, None, self.batch, 1e-3, 1)
        self.assertEqual(loss.dtype, np.float32)
        self.assertEqual(list(newp), [n for n, _, _ in param_specs(self.cfg)])
        self.assertTrue(all(v.dtype == np.float32 for v in newp.values()))
        self.assertTrue(all(v.dtype == np.float32 for v in state.values()))
        self.assertEqual(set(state), {n + s for n in newp for s in (".exp_avg", ".exp_avg_sq")})
        for k in before:
            np.testing.assert_array_equal(self.params[k], before[k])
            self.assertFalse(np.array_equal(newp[k], before[k]), k)

    def test_float32_tracks_float64(self):
        p32, s32, p64, s64 = self.params, None, self.params, None
        for step in (1, 2, 3):
            l32, p32, s32 = train_step(self.cfg, p32, s32, self.batch, 1e-2, step)
            l64, p64, s64 = train_step(self.cfg, p64, s64, self.batch, 1e-2, step,
                                       dtype=np.float64)
            self.assertAlmostEqual(float(l32), float(l64), delta=1e-5 * float(l64))
        self.assertLess(float(l64), math.log(13) - 0.05)

    def test_first_step_moves_each_weight_by_about_lr(self):
        # step 1: m_hat = g, v_hat = g^2, so the Adam part is lr * sign(g).
        _, g = loss_and_grads(self.cfg, self.params, self.batch)
        lr = 1e-3
        _, newp, _ = train_step(self.cfg, self.params, None, self.batch, lr, 1)
        for name, p in self.params.items():
            decay = 0.1 if p.ndim >= 2 else 0.0
            want = p - lr * decay * p - lr * np.sign(g[name])
            big = np.abs(g[name]) > 1e-5
            np.testing.assert_allclose(newp[name][big], want[big], rtol=0, atol=2e-6,
                                       err_msg=name)

    def test_rejects_wrong_params_and_batch(self):
        bad = dict(self.params)
        del bad["wpe"]
        with self.assertRaisesRegex(ValueError, "wpe"):
            train_step(self.cfg, bad, None, self.batch, 1e-3, 1)
        bad = dict(self.params, wte=np.zeros((13, 9), np.float32))
        with self.assertRaisesRegex(ValueError, "wte"):
            train_step(self.cfg, bad, None, self.batch, 1e-3, 1)
        with self.assertRaisesRegex(ValueError, "targets"):
            train_step(self.cfg, self.params, None, {"tokens": self.batch["tokens"]}, 1e-3, 1)
        with self.assertRaises(ValueError):
            train_step(self.cfg, self.params, None, self.batch, 1e-3, 0)


if __name__ == "__main__":
    unittest.main()
