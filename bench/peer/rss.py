#!/usr/bin/env python3
"""Runs a command and records its peak resident set size.

usage: rss.py OUT_DIR CMD...   (writes OUT_DIR/rss.<rank>.json, rank from
OMPI_COMM_WORLD_RANK or 0; the command's exit status is passed on)
"""

import json
import os
import resource
import subprocess
import sys


def main():
    out_dir, cmd = sys.argv[1], sys.argv[2:]
    rc = subprocess.call(cmd)
    kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    with open(os.path.join(out_dir, f"rss.{rank}.json"), "w") as f:
        json.dump({"rank": rank, "max_rss_kb": kb, "rc": rc}, f)
    sys.exit(rc)


if __name__ == "__main__":
    main()
