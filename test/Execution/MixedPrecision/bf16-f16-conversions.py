"""bf16 and f16 conversions of the CPU pipeline, bit for bit.

Mixed precision rounds FP32 values to bf16 or f16 (arith.truncf) and widens
them back (arith.extf). On the CPU these must round to nearest even on every
host: LLVM would lower a bf16 truncf to vcvtneps2bf16 on AVX512-BF16 hosts,
which flushes FP32 subnormals to zero, and to a library call elsewhere, so
--recast-lower-to-cpu expands bf16 conversions to integer arithmetic instead.
This test compiles conversions of constant tensors, runs them with
mlir-runner, and compares every output bit pattern with two references:

  * extf of all 65536 bit patterns of bf16 and of f16 to f32;
  * truncf from f32 to bf16 and to f16 of every value of the target type,
    every midpoint between adjacent values (ties to even) and its neighbours
    one f32 ulp away, the f32 subnormals (which bf16 keeps, as subnormals),
    the overflow boundary (f16: 65504 stays, 65520 becomes infinity),
    infinities, NaNs with payloads and random bit patterns.

The references are ml_dtypes (bf16) and numpy (f16), and for bf16 an integer
formula (add 0x7FFF plus the lowest kept bit, drop 16 bits) that is checked
to agree with ml_dtypes first. A NaN must stay a NaN; its payload is free.
"""

# RUN: %python %s --recast-opt=recast-opt --mlir-runner=mlir-runner --shared-libs=%mlir_runner_utils,%mlir_c_runner_utils --workdir=%t | FileCheck %s
# CHECK: extf bf16 -> f32: 65536 values, 0 mismatches
# CHECK: extf f16 -> f32: 65536 values, 0 mismatches
# CHECK: truncf f32 -> bf16: {{[0-9]+}} values, 0 mismatches
# CHECK: truncf f32 -> f16: {{[0-9]+}} values, 0 mismatches
# CHECK: bf16 subnormals: {{[1-9][0-9]*}}
# CHECK: PASS

import os
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import recast_reference as ref  # noqa: E402

LOW = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}


def truncf_inputs(dst, rng):
    """f32 inputs for truncf to `dst`: its values, midpoints and their
    neighbours, f32 subnormals, boundaries, specials and random bits."""
    values = np.arange(65536, dtype=np.uint16).view(LOW[dst]).astype(np.float64)
    finite = np.unique(np.abs(values[np.isfinite(values)]))
    mids = (finite[:-1] + finite[1:]) / 2  # exact in f32 for both types
    base = np.concatenate([finite, mids]).astype(np.float32)
    around = np.concatenate([np.nextafter(base, np.float32(np.inf)),
                             np.nextafter(base, np.float32(0))])
    tiny = np.finfo(np.float32).tiny
    subnormals = np.concatenate([
        np.arange(1, 4096, dtype=np.uint32),
        np.arange(0x7FF000, 0x800000, dtype=np.uint32),
        rng.integers(1, 0x800000, 20000, dtype=np.uint32),
    ]).view(np.float32)
    special = np.array([
        65504, 65519.996, 65520, 70000, 3.0e38, np.finfo(np.float32).max,
        np.inf, 0.0, tiny, 5.96e-8, 2.98e-8, 2.99e-8,
    ], np.float32)
    random_bits = rng.integers(0, 2**32, 40000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    positive = np.concatenate([base, around, subnormals, special])
    nans = np.array([0x7FC00000, 0x7F800001, 0x7FBFFFFF, 0x7FC12345],
                    np.uint32).view(np.float32)
    return np.concatenate([positive, -positive, random_bits, nans, -nans])


def reference_truncf(x, dst):
    with np.errstate(over="ignore", invalid="ignore"):
        bits = x.astype(LOW[dst]).view(np.uint16).astype(np.uint64)
    bits[np.isnan(x)] = ref.ANY_NAN
    return bits


def formula_truncf_bf16(x):
    """Round to nearest even on the bits: exact for every non-NaN f32,
    overflow to infinity included."""
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    rounded[np.isnan(x)] = ref.ANY_NAN
    return rounded


def reference_extf(src):
    x = np.arange(65536, dtype=np.uint16).view(LOW[src])
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits[np.isnan(x.astype(np.float32))] = ref.ANY_NAN
    return bits


def main():
    args = ref.parse_runner_arguments()
    rng = np.random.default_rng(16)

    cases = []  # (label, input array, source type, target type, expected)
    for src in ("bf16", "f16"):
        cases.append((f"extf {src} -> f32",
                      np.arange(65536, dtype=np.uint16).view(LOW[src]), src,
                      "f32", reference_extf(src)))
    subnormal_count = 0
    for dst in ("bf16", "f16"):
        x = truncf_inputs(dst, rng)
        expected = reference_truncf(x, dst)
        if dst == "bf16":
            formula = formula_truncf_bf16(x)
            if (formula != expected).any():
                print("the bit formula disagrees with ml_dtypes on f32 -> bf16")
                print("FAIL")
                return 1
            exponent_zero = (expected & 0x7F80) == 0
            subnormal_count = int(np.count_nonzero(
                exponent_zero & ((expected & 0x7F) != 0)))
        cases.append((f"truncf f32 -> {dst}", x, "f32", dst, expected))

    _, ok = ref.check_conversions(cases, args.recast_opt, args.mlir_runner,
                                  args.shared_libs, args.workdir)
    # The inputs reach every bf16 subnormal class, not only zero.
    print("bf16 subnormals:", subnormal_count)
    print("PASS" if ok else "FAIL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
