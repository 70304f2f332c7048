"""zshard-export: Hugging Face models it cannot export fail with one line
naming the op, the module path and its class (dropout in training mode, in
nn.Dropout, F.dropout and sdpa's dropout_p; data-dependent control flow),
exit status 1 on the command line, no traceback and nothing written.

Run: ZSHARD_BIN=build/bin .venv-torch/bin/python -m unittest test_hf_bad_input
"""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import torch  # noqa: E402

from zshard_export import ExportError, export_step  # noqa: E402
from zshard_export.examples import hf  # noqa: E402

try:
    import transformers  # noqa: F401
except ImportError:
    transformers = None

torch.set_num_threads(1)


@unittest.skipIf(transformers is None, "transformers is not installed (scripts/setup-torch.sh)")
class HfBadInputTest(unittest.TestCase):
    def export(self, family, attn, **changes):
        cfg = hf.config(family, attn=attn)
        for k, v in changes.items():
            setattr(cfg, k, v)
        torch.manual_seed(0)
        model = hf.model_class(family)(cfg)
        model.train()
        ids, labels = hf.batches(1, 2, 12, 97)
        with self.assertRaises(ExportError) as cm:
            export_step(model, torch.optim.AdamW(model.parameters()),
                        {"input_ids": ids[0], "labels": labels[0]}, hf.loss_fn)
        return str(cm.exception)

    def test_gpt2_dropout(self):
        msg = self.export("gpt2", "eager", embd_pdrop=0.1)
        self.assertRegex(msg, r"^dropout nn\.Dropout\(p=0\.1\) in module 'transformer\.drop' "
                         r"\(Dropout\): dropout is random and an exported step is deterministic")

    def test_llama_attention_dropout(self):
        msg = self.export("llama", "eager", attention_dropout=0.1)
        self.assertRegex(msg, r"^dropout F\.dropout\(p=0\.1\) in module "
                         r"'model\.layers\.0\.self_attn' \(LlamaAttention\): ")
        msg = self.export("llama", "sdpa", attention_dropout=0.1)
        self.assertRegex(msg, r"^dropout F\.scaled_dot_product_attention\(dropout_p=0\.1\) in "
                         r"module 'model\.layers\.0\.self_attn' \(LlamaAttention\): ")

    def test_cli_dropout_is_one_line(self):
        d = tempfile.mkdtemp()
        script = os.path.join(d, "drop.py")
        with open(script, "w") as f:
            f.write("from zshard_export.examples import hf\n"
                    "def make():\n"
                    "    model, opt, batch, loss_fn = hf.make(family='qwen2')\n"
                    "    model.config.attention_dropout = 0.1\n"
                    "    for layer in model.model.layers:\n"
                    "        layer.self_attn.attention_dropout = 0.1\n"
                    "    return model, opt, batch, loss_fn\n")
        out = os.path.join(d, "s.mlir")
        r = subprocess.run([os.path.join(common.ROOT, "tools", "zshard-export"), script + ":make",
                            "-o", out], capture_output=True, text=True,
                           env=dict(os.environ, ZSHARD_TORCH_VENV=os.path.dirname(
                               os.path.dirname(sys.executable))))
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = [line for line in r.stderr.splitlines() if not line.startswith("[transformers]")]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertRegex(lines[0], r"^zshard-export: error: dropout F\.scaled_dot_product_attention"
                         r"\(dropout_p=0\.1\) in module 'model\.layers\.0\.self_attn' "
                         r"\(Qwen2Attention\): ")
        self.assertNotIn("Traceback", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_dynamic_rope_is_data_dependent(self):
        msg = self.export("llama", "sdpa", rope_parameters={"rope_type": "dynamic", "factor": 2.0,
                                                            "rope_theta": 10000.0})
        self.assertRegex(msg, r"^data-dependent control flow or value in module "
                         r"'model\.rotary_emb' \(LlamaRotaryEmbedding\)")


if __name__ == "__main__":
    unittest.main()
