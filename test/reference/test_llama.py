"""Tests of the reference's llama model: every gradient against central
differences in float64, the rotary embedding as a rotation, grouped-query
attention as multi-head attention with repeated k / v weights, causality,
and the parameter counts of the published Llama shapes."""

import unittest

import numpy as np

from refutil import TOL, numeric_grad, rel_err
from zshard_ref import LlamaConfig, loss_and_grads, param_specs
from zshard_ref import llama


def random_params(cfg, rng):
    return {name: rng.normal(0.0, 0.3 if init == "normal" else 0.1, size=shape)
            + (1.0 if init == "ones" else 0.0)
            for name, shape, init in param_specs(cfg)}


def batch(cfg, rng, bsz):
    return {"tokens": rng.integers(0, cfg.vocab, size=(bsz, cfg.seq)),
            "targets": rng.integers(0, cfg.vocab, size=(bsz, cfg.seq))}


class TestLlama(unittest.TestCase):
    def test_gradients_gqa(self):
        rng = np.random.default_rng(0)
        cfg = LlamaConfig(layers=2, d_model=12, heads=6, kv_heads=2, ffn_hidden=10,
                          vocab=7, seq=4)
        params, b = random_params(cfg, rng), batch(cfg, rng, 2)
        _, grads = loss_and_grads(cfg, params, b, dtype=np.float64)
        f = lambda: loss_and_grads(cfg, params, b, dtype=np.float64)[0]  # noqa: E731
        for name, _, _ in param_specs(cfg):
            numeric = numeric_grad(f, params[name])
            self.assertGreater(np.linalg.norm(numeric), 1e-7, f"{name}: zero gradient")
            err = rel_err(grads[name], numeric)
            self.assertLess(err, TOL, f"d loss / d {name}: relative error {err:.3e}")

    def test_rope_is_a_rotation_and_its_backward_the_inverse(self):
        rng = np.random.default_rng(1)
        x = rng.normal(size=(2, 3, 5, 8))
        cos, sin = llama.rope_tables(5, 8, 10000.0, np.float64)
        y = llama.rope_forward(x, cos, sin)
        np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1))
        np.testing.assert_allclose(llama.rope_backward(y, cos, sin), x, atol=1e-12)
        np.testing.assert_array_equal(y[:, :, 0], x[:, :, 0])  # position 0 unrotated

    def test_gqa_equals_mha_with_repeated_kv(self):
        rng = np.random.default_rng(2)
        gqa = LlamaConfig(layers=1, d_model=8, heads=4, kv_heads=2, ffn_hidden=6,
                          vocab=5, seq=3)
        mha = LlamaConfig(layers=1, d_model=8, heads=4, kv_heads=4, ffn_hidden=6,
                          vocab=5, seq=3)
        p = random_params(gqa, rng)
        q = dict(p)
        for proj in ("k_proj", "v_proj"):
            w = p[f"model.layers.0.self_attn.{proj}.weight"].reshape(2, 2, 8)
            q[f"model.layers.0.self_attn.{proj}.weight"] = np.repeat(w, 2, axis=0).reshape(8, 8)
        b = batch(gqa, rng, 2)
        self.assertAlmostEqual(float(loss_and_grads(gqa, p, b, np.float64)[0]),
                               float(loss_and_grads(mha, q, b, np.float64)[0]), places=12)

    def test_prediction_at_t_ignores_later_tokens(self):
        rng = np.random.default_rng(3)
        cfg = LlamaConfig(layers=2, d_model=8, heads=2, kv_heads=1, ffn_hidden=6,
                          vocab=11, seq=5)
        p = random_params(cfg, rng)
        b = batch(cfg, rng, 1)
        probs = lambda x: llama.forward(cfg, p, llama.cast_batch(cfg, x, None))[1][-1][0]  # noqa
        base = probs(b)
        changed = {"tokens": b["tokens"].copy(), "targets": b["targets"]}
        changed["tokens"][0, 3] = (changed["tokens"][0, 3] + 1) % cfg.vocab
        moved = probs(changed)
        np.testing.assert_array_equal(moved[:3], base[:3])
        self.assertGreater(np.abs(moved[3:] - base[3:]).max(), 1e-6)

    def test_parameter_counts_of_the_published_shapes(self):
        shapes = {  # layers, d, heads, kv heads, ffn, vocab: Hugging Face's counts
            (32, 4096, 32, 32, 11008, 32000): 6738415616,
            (80, 8192, 64, 8, 28672, 32000): 68976648192,
            (32, 4096, 32, 8, 14336, 128256): 8030261248,
        }
        for (layers, d, h, kv, f, v), count in shapes.items():
            cfg = LlamaConfig(layers=layers, d_model=d, heads=h, kv_heads=kv, ffn_hidden=f,
                              vocab=v, seq=1)
            self.assertEqual(llama.parameter_count(cfg), count)

    def test_rejects_kv_heads_not_dividing_heads(self):
        with self.assertRaisesRegex(ValueError, "not a multiple of kv_heads"):
            LlamaConfig(layers=1, d_model=12, heads=6, kv_heads=4, ffn_hidden=4, vocab=3, seq=2)


if __name__ == "__main__":
    unittest.main()
