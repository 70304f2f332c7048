#!/usr/bin/env python3
"""The float32 judge (float32_budget.py) can fail: it passes an independent
float32 implementation and refuses runs with small, real bugs.

The runs here are the NumPy reference in float32 with a fault injected into
one step of the training loop, judged against the float64 reference as the
end-to-end tests judge compiled steps.
"""

import os
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
from zshard_ref import (AdamWConfig, GptConfig, adamw_update, init_params,  # noqa: E402
                        loss_and_grads, param_specs)

import float32_budget  # noqa: E402

CFG = GptConfig(layers=2, d_model=32, heads=4, vocab=32, seq=16)
STEPS, LR = 4, 1e-3


def batches(seed=3):
    rng = np.random.default_rng(seed)
    shape = (STEPS, 4, CFG.seq)
    return {"tokens": rng.integers(0, CFG.vocab, size=shape, dtype=np.int32),
            "targets": rng.integers(0, CFG.vocab, size=shape, dtype=np.int32)}


def float32_run(init, data, grad_fault=None, lr=LR, step_offset=0):
    """The float32 reference; `grad_fault(name, g, step)` may change a
    gradient, `step_offset` shifts the step AdamW's bias correction sees."""
    names = [n for n, _, _ in param_specs(CFG)]
    params = {n: init[n].copy() for n in names}
    state = {}
    for n in names:
        state[n + ".exp_avg"] = np.zeros_like(params[n])
        state[n + ".exp_avg_sq"] = np.zeros_like(params[n])
    losses = []
    for s in range(STEPS):
        loss, grads = loss_and_grads(CFG, params, {k: v[s] for k, v in data.items()})
        losses.append(float(loss))
        for n in names:
            g = grads[n] if grad_fault is None else grad_fault(n, grads[n], s + 1)
            p, m, v = adamw_update(params[n], g, state[n + ".exp_avg"],
                                   state[n + ".exp_avg_sq"], lr, s + 1 + step_offset)
            params[n], state[n + ".exp_avg"], state[n + ".exp_avg_sq"] = p, m, v
    state.update(params)
    return losses, state


class Float32BudgetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.init = init_params(CFG, seed=1)
        cls.data = batches()

    def judge(self, losses, state):
        failures, _ = float32_budget.judge_runs(CFG, self.init, self.data, STEPS, LR,
                                                AdamWConfig(), {"run": (losses, state)})
        return failures

    def test_float32_reference_passes(self):
        self.assertEqual(self.judge(*float32_run(self.init, self.data)), [])

    def test_gradient_off_by_a_thousandth_fails(self):
        """One tensor's gradient 0.1% too large (say, a reduction that counts
        one token twice in a thousand): its moments are out of budget."""
        def fault(name, g, step):
            return g * np.float32(1.001) if name == "h.1.mlp.c_fc.weight" else g
        failures = self.judge(*float32_run(self.init, self.data, fault))
        self.assertTrue(failures)
        self.assertTrue(all("h.1.mlp.c_fc.weight" in f for f in failures), failures[:3])

    def test_gradient_scaled_by_rank_count_fails(self):
        """Summed instead of averaged over 4 ranks: AdamW's update is almost
        scale-free, but the moments are not."""
        failures = self.judge(*float32_run(self.init, self.data,
                                           lambda n, g, s: g * np.float32(4.0)))
        self.assertTrue(any(".exp_avg" in f for f in failures), failures[:3])

    def test_wrong_learning_rate_fails(self):
        """A learning rate 1% off (a schedule one warmup step late, say)."""
        failures = self.judge(*float32_run(self.init, self.data, lr=LR * 1.01))
        self.assertTrue(any("'h.0.attn.c_proj.weight'" in f for f in failures), failures[:3])

    def test_missing_bias_correction_fails(self):
        """AdamW without bias correction (the step counter far off)."""
        failures = self.judge(*float32_run(self.init, self.data, step_offset=1000))
        self.assertTrue(failures)

    def test_noise_in_a_zero_gradient_passes(self):
        """The key slice of c_attn.bias has exactly zero gradient (softmax is
        shift-invariant): float32 noise there becomes a full AdamW step of
        up to +-lr, which is correct float32 behaviour, not a bug. Noise of a
        few roundoffs of the tensor's largest gradient there must pass."""
        d = CFG.d_model

        def fault(name, g, step):
            if name.endswith("attn.c_attn.bias"):
                noise = 4 * float32_budget.U32 * np.abs(g).max()
                g = g.copy()
                g[d:2 * d] = np.float32(noise) * np.sign(np.arange(d) % 2 - 0.5)
            return g
        losses, state = float32_run(self.init, self.data, fault)
        moved = np.abs(state["h.0.attn.c_attn.bias"][d:2 * d]).max()
        self.assertGreater(moved, 0.1 * LR)
        self.assertEqual(self.judge(losses, state), [])

    def test_loss_off_fails(self):
        losses, state = float32_run(self.init, self.data)
        losses[2] *= 1 + 1e-4
        failures = self.judge(losses, state)
        self.assertEqual(len(failures), 1)
        self.assertIn("loss of step 3", failures[0])


if __name__ == "__main__":
    unittest.main()
