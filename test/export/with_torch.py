#!/usr/bin/env python3
"""Runs a test script or module with the torch venv's Python, or reports SKIP.

usage: with_torch.py ARGS...   (ARGS as for python: a script and its options,
or -m unittest ...). The venv is $ZSHARD_TORCH_VENV or <repo>/.venv-torch, as
scripts/setup-torch.sh makes it. Without it: prints a SKIP line and exits 77,
which test/export/CMakeLists.txt declares as ctest's SKIP_RETURN_CODE.
"""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SKIP = 77


def main():
    venv = os.environ.get("ZSHARD_TORCH_VENV") or os.path.join(ROOT, ".venv-torch")
    python = os.path.join(venv, "bin", "python")
    if not os.access(python, os.X_OK):
        print(f"SKIP: no torch venv at {venv} (run scripts/setup-torch.sh to create it)")
        sys.exit(SKIP)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    env["ZSHARD_TORCH_VENV"] = venv
    os.execve(python, [python] + sys.argv[1:], env)


if __name__ == "__main__":
    main()
