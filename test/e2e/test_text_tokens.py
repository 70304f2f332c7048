#!/usr/bin/python3
"""scripts/text-tokens.py: bytes in, u16 tokens out, split without overlap;
each error one line and exit 1."""

import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "text-tokens.py")


def tokens(cmd_args, cwd):
    return subprocess.run([sys.executable, SCRIPT, *cmd_args], cwd=cwd,
                          capture_output=True, text=True)


class TextTokensTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = self.dir.name
        for name, text in (("a.txt", b"hello \xc3\xa9"), ("b.txt", b"world!\n" * 3)):
            with open(os.path.join(self.d, name), "wb") as f:
                f.write(text)

    def tearDown(self):
        self.dir.cleanup()

    def test_split_round_trip(self):
        r = tokens(["a.txt", "b.txt", "--train", "t.bin", "--val", "v.bin",
                    "--val-fraction", "0.25"], self.d)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = b"hello \xc3\xa9" + b"\n" + b"world!\n" * 3
        raw = {}
        for name in ("t.bin", "v.bin"):
            with open(os.path.join(self.d, name), "rb") as f:
                raw[name] = f.read()
            self.assertFalse(any(raw[name][1::2]), "high bytes of u16 tokens must be 0")
        split = len(text) - int(len(text) * 0.25)
        self.assertEqual(bytes(raw["t.bin"][0::2]), text[:split])
        self.assertEqual(bytes(raw["v.bin"][0::2]), text[split:])
        self.assertEqual(r.stdout.strip(), f"text-tokens: {split} training and "
                         f"{len(text) - split} validation tokens (bytes, vocabulary 256) "
                         "from 2 files")

    def check_error(self, cmd_args, line):
        r = tokens(cmd_args, self.d)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, line + "\n")
        self.assertEqual(r.stdout, "")

    def test_errors(self):
        self.check_error(["nope.txt", "--train", "t", "--val", "v"],
                         "text-tokens: cannot read nope.txt: No such file or directory")
        self.check_error(["a.txt", "--train", "t", "--val", "v", "--val-fraction", "1.5"],
                         "text-tokens: --val-fraction 1.5 is not between 0 and 1")
        self.check_error(["a.txt", "--train", "t", "--val", "v", "--min-tokens", "100"],
                         "text-tokens: t would hold 8 tokens, fewer than --min-tokens 100")
        self.check_error(["a.txt", "--train", "missing/t", "--val", "v"],
                         "text-tokens: cannot write missing/t: No such file or directory")


if __name__ == "__main__":
    unittest.main()
