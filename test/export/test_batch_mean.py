"""Mean losses over the global batch (python/zshard_export/batch_mean.py).

While tracing, `F.cross_entropy` / `F.nll_loss` with reduction "mean" become
sum / zshard.batch_mean(count of counted targets). Tests: on one slice (eager,
outside a trace) the rewrite is torch's own mean, with ignore_index and
label smoothing, in float64; calls the rewrite must not take (class weights,
other reductions, probability targets, legacy arguments) go to torch as they
are; an exported step carries exactly one zshard.batch_mean of a 0-d f32
that divides the loss. The sharded losses against torch on the global batch:
export.hf.llama-*-uneven-labels* (hf_models.py --uneven-labels).
"""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from zshard_export import export_step  # noqa: E402
from zshard_export.batch_mean import BatchMeanLossMode  # noqa: E402
from zshard_export.examples import hf  # noqa: E402

torch.set_num_threads(1)


def inputs(dtype=torch.float32):
    g = torch.Generator().manual_seed(3)
    logits = torch.randn(2, 7, 11, generator=g, dtype=dtype)
    target = torch.randint(0, 11, (2, 7), generator=g)
    target[0, :3] = -100
    target[1, 5] = -100
    return logits, target


class OneSlice(unittest.TestCase):
    def check(self, func, *args, matched=1, **kwargs):
        want = func(*args, **kwargs)
        mode = BatchMeanLossMode()
        with mode:
            got = func(*args, **kwargs)
        self.assertEqual(mode.matched, matched)
        torch.testing.assert_close(got, want, rtol=1e-6, atol=0)

    def test_cross_entropy_ignore_index(self):
        logits, target = inputs()
        self.check(F.cross_entropy, logits.reshape(-1, 11), target.reshape(-1))
        self.check(F.cross_entropy, logits.transpose(1, 2), target)  # [N, C, d]

    def test_label_smoothing_and_other_ignore_index(self):
        logits, target = inputs()
        target[target == -100] = 4
        self.check(F.cross_entropy, logits.reshape(-1, 11), target.reshape(-1),
                   ignore_index=4, label_smoothing=0.1)

    def test_nll_loss(self):
        logits, target = inputs()
        self.check(F.nll_loss, F.log_softmax(logits, -1).reshape(-1, 11), target.reshape(-1))

    def test_left_to_torch(self):
        logits, target = inputs()
        flat, t = logits.reshape(-1, 11), target.reshape(-1)
        weight = torch.rand(11, generator=torch.Generator().manual_seed(1))
        self.check(F.cross_entropy, flat, t, weight=weight, matched=0)
        self.check(F.cross_entropy, flat, t, reduction="sum", matched=0)
        self.check(F.cross_entropy, flat, torch.softmax(flat, -1), matched=0)
        self.check(F.cross_entropy, flat.double(), t, matched=0)  # the contract's loss is f32


class Exported(unittest.TestCase):
    def test_one_batch_mean_divides_the_loss(self):
        model, opt, batch, loss_fn = hf.make(family="llama", attn="sdpa")
        mlir = export_step(model, opt, batch, loss_fn).mlir
        means = re.findall(r"(%\S+) = zshard\.batch_mean (%\S+) : tensor<f32>", mlir)
        self.assertEqual(len(means), 1, mlir[-3000:])
        result = means[0][0]
        # The forward's division and the backward's both read it.
        readers = [line for line in mlir.splitlines() if re.search(re.escape(result) + r"\b", line)
                   and "batch_mean" not in line]
        self.assertGreaterEqual(len(readers), 2, readers)


if __name__ == "__main__":
    unittest.main()
