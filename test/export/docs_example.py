#!/usr/bin/env python3
"""Runs the end-to-end example of docs/zshard-export.md exactly as written.

The example is the ```sh block after the line `<!-- docs_example.py -->`.
It runs, unchanged, with bash in a scratch directory where `tools`,
`build/bin` and `README.md` are links to the repository's (and --bin), so
what the docs tell a user to type is what this test runs. Passes when every
command succeeds, the run prints every step and the loss falls.

usage: docs_example.py --bin BUILD/bin --work DIR
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOC = os.path.join(ROOT, "docs", "zshard-export.md")
MARKER = "<!-- docs_example.py -->"


def example(doc_text):
    """The sh block after MARKER."""
    at = doc_text.find(MARKER)
    if at < 0:
        sys.exit(f"FAIL: no '{MARKER}' line in {DOC}")
    m = re.match(r"\s*```sh\n(.*?)\n```", doc_text[at + len(MARKER):], re.S)
    if not m:
        sys.exit(f"FAIL: no ```sh block right after '{MARKER}' in {DOC}")
    return m.group(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    with open(DOC) as f:
        block = example(f.read())
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(os.path.join(args.work, "build"))
    os.symlink(os.path.join(ROOT, "tools"), os.path.join(args.work, "tools"))
    os.symlink(os.path.join(ROOT, "README.md"), os.path.join(args.work, "README.md"))
    os.symlink(os.path.abspath(args.bin), os.path.join(args.work, "build", "bin"))
    print(block, flush=True)
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=args.work,
                       stdout=subprocess.PIPE, text=True)
    sys.stdout.write(r.stdout)
    if r.returncode != 0:
        sys.exit(f"FAIL: the example exits with {r.returncode}")
    steps = re.findall(r"^step (\d+)/(\d+)\s+loss ([0-9.eE+-]+)", r.stdout, re.M)
    want = re.findall(r"--steps (\d+)", block)
    if not steps or not want or len(steps) != int(want[-1]):
        sys.exit(f"FAIL: {len(steps)} step lines, the example asks for {want}")
    first, last = float(steps[0][2]), float(steps[-1][2])
    if not last < first:
        sys.exit(f"FAIL: the loss does not fall ({first} -> {last})")
    print(f"PASS: {len(steps)} steps, loss {first:.4f} -> {last:.4f}")


if __name__ == "__main__":
    main()
