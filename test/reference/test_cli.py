"""CLI smoke: ``python3 -m zshard_ref step`` runs tiny models, prints one JSON
line per step, and writes a file that round-trips and matches the library."""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from refutil import PYTHON_DIR, REPO

from zshard_ref import GptConfig, MlpConfig, init_params, param_specs, train_step
from zshard_ref import safetensors_io as st

GPT_ARGS = ["--model", "gpt", "--layers", "2", "--d-model", "32", "--heads", "4",
            "--vocab", "64", "--seq", "16", "--batch", "2"]
MLP_ARGS = ["--model", "mlp", "--widths", "8,16,4", "--batch", "4"]


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "zshard_ref", "step", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)


class CliCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def steps(self, *args):
        proc = run_cli(*args)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = [json.loads(line) for line in proc.stdout.splitlines()]
        for rec in lines:
            self.assertEqual(set(rec), {"step", "loss"})
            self.assertTrue(math.isfinite(rec["loss"]), rec)
        return lines

    def assertDecreasing(self, losses):
        for a, b in zip(losses, losses[1:]):
            self.assertLess(b, a, losses)

    def check_out_file(self, path, cfg, step):
        f = st.read_file(path)
        self.assertEqual(f.metadata["step"], str(step))
        names = [n for n, _, _ in param_specs(cfg)]
        want = {n + s for n in names for s in ("", ".exp_avg", ".exp_avg_sq")}
        self.assertEqual(set(f.tensors), want)
        for name, shape, _ in param_specs(cfg):
            for suffix in ("", ".exp_avg", ".exp_avg_sq"):
                self.assertEqual(f.tensors[name + suffix].shape, tuple(shape))
                self.assertEqual(f.dtypes[name + suffix], "F32")
                self.assertTrue(np.all(np.isfinite(f.tensors[name + suffix])))
        # written -> read -> written again gives the same bytes
        again = self.path("again.safetensors")
        st.save_file(again, f.tensors, metadata=f.metadata)
        with open(path, "rb") as a, open(again, "rb") as b:
            self.assertEqual(a.read(), b.read())
        return f.tensors


class TestGptCli(CliCase):
    cfg = GptConfig(layers=2, d_model=32, heads=4, vocab=64, seq=16)

    def batch_file(self):
        rng = np.random.default_rng(7)
        batch = {"tokens": rng.integers(0, 64, size=(2, 16)).astype(np.int32),
                 "targets": rng.integers(0, 64, size=(2, 16)).astype(np.int32)}
        path = self.path("batch.safetensors")
        st.save_file(path, batch)
        return path, batch

    def test_three_steps_match_the_library(self):
        bpath, batch = self.batch_file()
        out = self.path("out.safetensors")
        lines = self.steps(*GPT_ARGS, "--init-seed", "0", "--batch-file", bpath,
                           "--steps", "3", "--lr", "1e-3", "--out", out)
        self.assertEqual([r["step"] for r in lines], [1, 2, 3])
        losses = [r["loss"] for r in lines]
        self.assertAlmostEqual(losses[0], math.log(64), delta=0.05)
        self.assertDecreasing(losses)
        tensors = self.check_out_file(out, self.cfg, 3)
        # the same steps in-process give bit-identical losses and state
        params, state = init_params(self.cfg, 0), None
        for step in (1, 2, 3):
            loss, params, state = train_step(self.cfg, params, state, batch, 1e-3, step)
            self.assertEqual(float(loss), losses[step - 1])
        for name in params:
            np.testing.assert_array_equal(tensors[name], params[name], err_msg=name)
            np.testing.assert_array_equal(tensors[name + ".exp_avg"], state[name + ".exp_avg"])
            np.testing.assert_array_equal(tensors[name + ".exp_avg_sq"],
                                          state[name + ".exp_avg_sq"])

    def test_tied_and_resume(self):
        bpath, _ = self.batch_file()
        out3, out2, out3b = (self.path(n) for n in ("o3", "o2", "o3b"))
        tied = GPT_ARGS + ["--tied", "--batch-file", bpath, "--lr", "1e-3"]
        full = self.steps(*tied, "--init-seed", "4", "--steps", "3", "--out", out3)
        self.assertDecreasing([r["loss"] for r in full])
        t3 = self.check_out_file(out3, GptConfig(2, 32, 4, 64, 16, tied=True), 3)
        self.assertNotIn("lm_head.weight", t3)
        first = self.steps(*tied, "--init-seed", "4", "--steps", "2", "--out", out2)
        rest = self.steps(*tied, "--params", out2, "--steps", "1", "--out", out3b)
        self.assertEqual(first + rest, full)  # resumes at AdamW step 3 with its moments
        t3b = st.load_file(out3b)
        for name in t3:
            np.testing.assert_array_equal(t3b[name], t3[name], err_msg=name)

    def test_params_file_and_random_batch(self):
        params = self.path("in.safetensors")
        st.save_file(params, init_params(self.cfg, 9))
        out = self.path("out.safetensors")
        lines = self.steps(*GPT_ARGS, "--params", params, "--batch-seed", "1",
                           "--steps", "3", "--lr", "3e-3", "--out", out)
        self.assertDecreasing([r["loss"] for r in lines])
        self.check_out_file(out, self.cfg, 3)

    def test_errors_name_the_problem(self):
        bad = self.path("bad.safetensors")
        with open(bad, "wb") as f:
            f.write(b"\x05\x00")
        proc = run_cli(*GPT_ARGS, "--params", bad, "--batch-seed", "1", "--out",
                       self.path("o"))
        self.assertEqual(proc.returncode, 1)
        self.assertIn(bad, proc.stderr)
        self.assertIn("truncated", proc.stderr)
        small = self.path("small.safetensors")
        st.save_file(small, init_params(GptConfig(1, 32, 4, 64, 16), 0))
        proc = run_cli(*GPT_ARGS, "--params", small, "--batch-seed", "1", "--out",
                       self.path("o"))
        self.assertEqual(proc.returncode, 1)
        self.assertIn("h.1.ln_1.weight", proc.stderr)


class TestMlpCli(CliCase):
    def test_mse_and_xent(self):
        for loss in ("mse", "xent"):
            out = self.path(f"{loss}.safetensors")
            lines = self.steps(*MLP_ARGS, "--loss", loss, "--init-seed", "2",
                               "--batch-seed", "3", "--steps", "3", "--lr", "1e-2",
                               "--out", out)
            self.assertEqual([r["step"] for r in lines], [1, 2, 3])
            self.assertDecreasing([r["loss"] for r in lines])
            if loss == "xent":
                self.assertAlmostEqual(lines[0]["loss"], math.log(4), delta=0.02)
            self.check_out_file(out, MlpConfig((8, 16, 4), loss), 3)

    def test_batch_file_with_a_step_axis(self):
        rng = np.random.default_rng(5)
        batches = {"x": rng.normal(size=(2, 4, 8)).astype(np.float32),
                   "labels": rng.integers(0, 4, size=(2, 4)).astype(np.int32)}
        bpath = self.path("b.safetensors")
        st.save_file(bpath, batches)
        lines = self.steps(*MLP_ARGS, "--loss", "xent", "--init-seed", "2", "--batch-file",
                           bpath, "--steps", "3", "--out", self.path("o"))
        cfg = MlpConfig((8, 16, 4), "xent")
        params, state = init_params(cfg, 2), None
        for step in (1, 2, 3):
            batch = {k: v[(step - 1) % 2] for k, v in batches.items()}
            loss, params, state = train_step(cfg, params, state, batch, 1e-3, step)
            self.assertEqual(float(loss), lines[step - 1]["loss"])


if __name__ == "__main__":
    unittest.main()
