"""recast.random_uniform and recast.dropout compute Philox-4x32-10: the
reference below reproduces the Random123 known-answer vectors, and the
compiled ops (CPU pipeline) match it bit for bit on 65,536 elements per draw,
for a zero and a full 64-bit seed and offset. Then the statistics: uniform
mean 1/2 and variance 1/12, dropout keeping 1 - rate of the elements with
the value 1 / (1 - rate), and draws that change with the seed and the
offset.

# RUN: rm -rf %t
# RUN: %python %s --recast-run=recast-run --model=%S/Inputs/random-uniform.mlir --workdir=%t | FileCheck %s
# CHECK: PASS known-answer vectors
# CHECK: PASS seed 0x0 offset 0x0: f64, f32, bf16 and dropout equal the reference
# CHECK: PASS word 0 of counter 0, key 0 is 0x6627e8d5
# CHECK: PASS seed 0x299f31d0a4093822 offset 0x370734413198a2e: f64, f32, bf16 and dropout equal the reference
# CHECK: PASS the gradient of dropout is its mask
# CHECK: PASS statistics
# CHECK: PASS new seed, new offset: new draws
"""

import argparse
import os
import subprocess
import sys

import numpy as np

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK = np.uint64(0xFFFFFFFF)


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Philox-4x32-10 on arrays of uint64 holding 32-bit words."""
    c = [np.asarray(x, dtype=np.uint64) & MASK for x in (c0, c1, c2, c3)]
    k0 = np.uint64(k0) & MASK
    k1 = np.uint64(k1) & MASK
    for r in range(10):
        if r:
            k0 = (k0 + np.uint64(W0)) & MASK
            k1 = (k1 + np.uint64(W1)) & MASK
        p0 = np.uint64(M0) * c[0]
        p1 = np.uint64(M1) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & MASK, p1 & MASK,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & MASK, p0 & MASK]
    return c


# Random123's kat_vectors for philox4x32 with 10 rounds: counter, key, result.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff, 0xffffffff),
     (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
     (0xa4093822, 0x299f31d0), (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def reference_words(seed, offset, count):
    """Word 0 of each element's block: counter (n, offset), key seed."""
    n = np.arange(count, dtype=np.uint64)
    words = philox4x32_10(n & MASK, n >> np.uint64(32),
                          offset & 0xFFFFFFFF, offset >> 32,
                          seed & 0xFFFFFFFF, seed >> 32)
    return words[0].astype(np.uint32)


def bf16_bits(a):
    return (a.view(np.uint16) if a.dtype == np.uint16 else a).astype(np.uint16)


def draw(options, seed, offset, name, entry="train_step"):
    out = os.path.join(options.workdir, name)
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "in-seed.npy"), np.array(seed, dtype=np.int64))
    np.save(os.path.join(out, "in-offset.npy"), np.array(offset, dtype=np.int64))
    cmd = [options.recast_run, options.model, "--steps=1", f"--entry={entry}",
           f"--arg=seed={out}/in-seed.npy", f"--arg=offset={out}/in-offset.npy",
           f"--save={out}"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{result.stderr}")
    names = ("x",) if entry == "grad_step" else ("u64", "u32", "u16", "drop")
    return {k: np.load(os.path.join(out, k + ".npy")) for k in names}


def check(condition, message):
    print(f"{'PASS' if condition else 'FAIL'} {message}")
    if not condition:
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-run", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--workdir", required=True)
    options = parser.parse_args()

    check(all(tuple(int(w) for w in philox4x32_10(*ctr, *key)) == expected
              for ctr, key, expected in KAT), "known-answer vectors")

    count = 65536
    draws = {}
    for seed, offset in ((0, 0), (0x299f31d0a4093822, 0x0370734413198a2e)):
        got = draw(options, seed, offset, f"{seed:x}-{offset:x}")
        draws[(seed, offset)] = got
        words = reference_words(seed, offset, count)
        u64 = words.astype(np.float64) * 2.0**-32
        u32 = ((words >> 8).astype(np.float32) * np.float32(2.0**-24))
        # bf16: the top 8 bits times 2^-8, exact; compare the bit patterns.
        u16 = ((words >> 24).astype(np.float32) * np.float32(2.0**-8))
        u16_bits = (u16.view(np.uint32) >> 16).astype(np.uint16)
        keep = words >= np.uint32(int(0.25 * 2**32))
        drop = np.where(keep, np.float32(1 / 0.75), np.float32(0))
        same = (np.array_equal(got["u64"], u64) and
                np.array_equal(got["u32"], u32) and
                np.array_equal(got["u16"].view(np.uint16), u16_bits) and
                np.array_equal(got["drop"], drop))
        check(same, f"seed {seed:#x} offset {offset:#x}: f64, f32, bf16 and "
                    "dropout equal the reference")
        if seed == 0 and offset == 0:
            word = int(round(got["u64"][0] * 2.0**32))
            check(word == KAT[0][2][0],
                  f"word 0 of counter 0, key 0 is {word:#x}")

    # d/dx sum(dropout(x)) = keep / (1 - rate), bit for bit the forward's
    # mask on ones.
    seed, offset = 0x299f31d0a4093822, 0x0370734413198a2e
    grad = draw(options, seed, offset, "grad", entry="grad_step")["x"]
    check(np.array_equal(grad, draws[(seed, offset)]["drop"]),
          "the gradient of dropout is its mask")

    # Statistics over 65,536 draws: 5 standard errors.
    got = draws[(0x299f31d0a4093822, 0x0370734413198a2e)]
    u = got["u64"]
    mean, var = u.mean(), u.var()
    kept = np.count_nonzero(got["drop"]) / count
    sd_mean = np.sqrt(1 / 12 / count)
    sd_kept = np.sqrt(0.25 * 0.75 / count)
    ok = (abs(mean - 0.5) < 5 * sd_mean and abs(var - 1 / 12) < 0.002 and
          u.min() >= 0 and u.max() < 1 and abs(kept - 0.75) < 5 * sd_kept and
          got["u32"].max() < 1 and
          # 16 equal bins each hold 1/16 of the draws (chi-square, 15 dof).
          ((np.histogram(u, 16, (0, 1))[0] - count / 16) ** 2 /
           (count / 16)).sum() < 40)
    print(f"mean {mean:.5f} variance {var:.5f} kept {kept:.4f}")
    check(ok, "statistics")

    a = draws[(0, 0)]["u64"]
    b = draw(options, 1, 0, "1-0")["u64"]
    c = draw(options, 0, 1, "0-1")["u64"]
    check(np.mean(a == b) < 0.001 and np.mean(a == c) < 0.001 and
          np.mean(b == c) < 0.001, "new seed, new offset: new draws")


if __name__ == "__main__":
    main()
