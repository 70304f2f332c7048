#!/usr/bin/python3
"""Byte-level token files from text, as nanoGPT's shakespeare_char prepare.py.

Every byte of the given files (in the order given, joined by one newline) is
one token, 0..255, written as little-endian uint16 -- the `--data FILE
--data-dtype u16` format of zshard-run. The last --val-fraction of the bytes
go to the validation file, the rest to the training file, so that the two
never share text.

usage: text-tokens.py FILE... --train TRAIN.bin --val VAL.bin
                      [--val-fraction 0.1] [--min-tokens N]

Prints one line: the byte count of each file and the vocabulary (256).
"""

import argparse
import sys
from array import array

VOCAB = 256


def main() -> int:
    parser = argparse.ArgumentParser(
        description="byte-level u16 token files for zshard-run --data")
    parser.add_argument("files", nargs="+", help="text files to read")
    parser.add_argument("--train", required=True, help="training token file")
    parser.add_argument("--val", required=True, help="validation token file")
    parser.add_argument("--val-fraction", type=float, default=0.1)
    parser.add_argument("--min-tokens", type=int, default=1,
                        help="fail unless each file gets this many tokens")
    args = parser.parse_args()
    if not 0.0 < args.val_fraction < 1.0:
        print(f"text-tokens: --val-fraction {args.val_fraction} is not "
              "between 0 and 1", file=sys.stderr)
        return 1
    text = bytearray()
    for path in args.files:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            print(f"text-tokens: cannot read {path}: {e.strerror}",
                  file=sys.stderr)
            return 1
        if text:
            text += b"\n"
        text += data
    split = len(text) - int(len(text) * args.val_fraction)
    parts = {args.train: text[:split], args.val: text[split:]}
    for path, part in parts.items():
        if len(part) < args.min_tokens:
            print(f"text-tokens: {path} would hold {len(part)} tokens, fewer "
                  f"than --min-tokens {args.min_tokens}", file=sys.stderr)
            return 1
        tokens = array("H", list(part))
        if sys.byteorder != "little":
            tokens.byteswap()
        try:
            with open(path, "wb") as f:
                tokens.tofile(f)
        except OSError as e:
            print(f"text-tokens: cannot write {path}: {e.strerror}",
                  file=sys.stderr)
            return 1
    print(f"text-tokens: {len(parts[args.train])} training and "
          f"{len(parts[args.val])} validation tokens (bytes, vocabulary "
          f"{VOCAB}) from {len(args.files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
