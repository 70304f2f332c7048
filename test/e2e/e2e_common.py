"""What the end-to-end scripts share: running a tool, and their file paths."""

import os
import subprocess


def run(cmd, **kwargs):
    """Runs `cmd` (echoed first, like a shell trace); fails on a non-zero exit."""
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kwargs)


def paths(args):
    """`(tool, w)`: the path of a tool in --bin, of a file in --work (made)."""
    os.makedirs(args.work, exist_ok=True)
    return (lambda name: os.path.join(args.bin, name),
            lambda name: os.path.join(args.work, name))
