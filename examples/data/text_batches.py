"""Writes a --data directory of character batches for a character model.

Usage: text_batches.py CORPUS OUT_DIR [--batches=N] [--batch=B] [--length=L]
                       [--seed=S] [--name=tokens]

Each character of the ASCII file CORPUS is a token (its code, below 128:
gpt-tiny's vocabulary). Batch k holds B windows of L consecutive characters
starting at positions drawn from S (splitmix64, the same on every machine),
so that OUT_DIR/<name>.npy is int32 of shape (N, B, L): recast-run --data
feeds batch k to step k. gpt-tiny reads windows of 33 (32 inputs and the 32
next characters) in batches of 2.
"""

import argparse
import os
import sys

import numpy as np

MASK64 = (1 << 64) - 1


def splitmix64(state):
    """One step of splitmix64: the next state and its output."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("out_dir")
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--length", type=int, default=33)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="tokens")
    args = parser.parse_args()

    with open(args.corpus, "rb") as f:
        text = f.read()
    if any(c >= 128 for c in text):
        sys.exit(f"text_batches.py: {args.corpus} is not ASCII: every "
                 "character must be a token below 128")
    if len(text) < args.length:
        sys.exit(f"text_batches.py: {args.corpus} holds {len(text)} characters, "
                 f"fewer than one window of {args.length}")
    if args.batches < 1 or args.batch < 1:
        sys.exit("text_batches.py: --batches and --batch must be positive")

    codes = np.frombuffer(text, dtype=np.uint8).astype(np.int32)
    starts = len(codes) - args.length + 1
    state = args.seed & MASK64
    tokens = np.empty((args.batches, args.batch, args.length), dtype=np.int32)
    for k in range(args.batches):
        for b in range(args.batch):
            state, bits = splitmix64(state)
            start = bits % starts
            tokens[k, b] = codes[start:start + args.length]
    os.makedirs(args.out_dir, exist_ok=True)
    np.save(os.path.join(args.out_dir, args.name + ".npy"), tokens,
            allow_pickle=False)


if __name__ == "__main__":
    main()
