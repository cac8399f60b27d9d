"""FP8 conversions of the CPU pipeline, bit for bit against ml_dtypes.

--recast-expand-fp8 (run by --recast-lower-to-cpu) lowers arith.extf from and
arith.truncf to f8E4M3FN and f8E5M2. This test compiles conversions of
constant tensors, runs them with mlir-runner, and compares every output bit
pattern with ml_dtypes:

  * extf of all 256 bit patterns of each format to f32, f16, bf16 and f64;
  * truncf to each format from every f16 and every bf16 bit pattern, and
    from f32 and f64 values: all FP8 values, every midpoint between adjacent
    FP8 values (ties to even) and its neighbours one source ulp away, the
    subnormal range, the largest finite value and what lies beyond it,
    infinities, NaNs with payloads, source subnormals, and random values
    (uniform bit patterns and log-uniform magnitudes in the FP8 range).

The reference saturates: values beyond the largest finite value (448 for
E4M3FN, 57344 for E5M2), infinities included, become that value with their
sign (CUDA's cvt.rn.satfinite); ml_dtypes itself overflows to NaN (E4M3FN)
or infinity (E5M2), so the reference clips before converting. NaN becomes
the format's canonical NaN with its sign, as ml_dtypes gives.
"""

# RUN: %python %s --recast-opt=recast-opt --mlir-runner=mlir-runner --shared-libs=%mlir_runner_utils,%mlir_c_runner_utils --workdir=%t | FileCheck %s
# CHECK: extf f8E4M3FN -> f32: 256 values, 0 mismatches
# CHECK: extf f8E5M2 -> f64: 256 values, 0 mismatches
# CHECK: truncf f16 -> f8E4M3FN: 65536 values, 0 mismatches
# CHECK: truncf bf16 -> f8E5M2: 65536 values, 0 mismatches
# CHECK: truncf f32 -> f8E4M3FN: {{[0-9]+}} values, 0 mismatches
# CHECK: truncf f64 -> f8E5M2: {{[0-9]+}} values, 0 mismatches
# CHECK: FP8 types after lowering: 0
# CHECK: PASS

import os
import re
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import recast_reference as ref  # noqa: E402

FORMATS = {
    "f8E4M3FN": (ml_dtypes.float8_e4m3fn, 448.0, 0x7F),
    "f8E5M2": (ml_dtypes.float8_e5m2, 57344.0, 0x7E),
}
# MLIR type -> (numpy dtype, integer type of the same width, numpy uint).
WIDE = {
    "f16": (np.float16, "i16", np.uint16),
    "bf16": (ml_dtypes.bfloat16, "i16", np.uint16),
    "f32": (np.float32, "i32", np.uint32),
    "f64": (np.float64, "i64", np.uint64),
}


def fp8_values(fmt):
    """Every FP8 bit pattern's value in f64 (NaNs included)."""
    return np.arange(256, dtype=np.uint8).view(FORMATS[fmt][0]).astype(np.float64)


def truncf_inputs(src, fmt, rng):
    dtype = WIDE[src][0]
    if src in ("f16", "bf16"):
        return np.arange(65536, dtype=np.uint16).view(dtype)
    finfo = np.finfo(dtype)
    values = fp8_values(fmt)
    finite = np.unique(np.abs(values[np.isfinite(values)]))
    mids = (finite[:-1] + finite[1:]) / 2  # exact in f32 and f64
    largest = FORMATS[fmt][1]
    ulp_max = finite[-1] - finite[-2]
    special = [
        largest, largest + ulp_max / 2, largest + ulp_max, largest * 1.5,
        largest * 2, 1e30, float(finfo.max), np.inf, 0.0,
        float(finfo.tiny), float(finfo.tiny) / 2**10, float(finfo.smallest_subnormal),
        finite[1] / 2, finite[1] / 4, finite[1] * 0.75, finite[1] / 2 * 1.0000001,
    ]
    base = np.concatenate([finite, mids, np.array(special)]).astype(dtype)
    with np.errstate(over="ignore"):
        around = np.concatenate([np.nextafter(base, dtype(np.inf)),
                                 np.nextafter(base, dtype(0))])
    log_uniform = (2.0 ** rng.uniform(np.log2(finite[1]) - 4,
                                      np.log2(largest) + 2, 20000)).astype(dtype)
    bits_dtype = WIDE[src][2]
    info = np.iinfo(bits_dtype)
    random_bits = rng.integers(0, int(info.max), 20000, dtype=bits_dtype,
                               endpoint=True).view(dtype)
    positive = np.concatenate([base, around, log_uniform])
    nans = np.array([np.nan], dtype).view(bits_dtype)
    nan_payloads = (nans | bits_dtype(1)).view(dtype)
    return np.concatenate([positive, -positive, random_bits,
                           np.array([np.nan, -np.nan, -np.inf], dtype),
                           nan_payloads, -nan_payloads]).astype(dtype)


def reference_truncf(x, fmt):
    dtype8, largest, nan_bits = FORMATS[fmt]
    with np.errstate(invalid="ignore"):
        wide = x.astype(np.float64)
    nan = np.isnan(wide)
    clipped = np.clip(np.where(nan, 0.0, wide), -largest, largest)
    bits = clipped.astype(dtype8).view(np.uint8).copy()
    sign = (np.signbit(wide).astype(np.uint8) << 7)
    bits[nan] = nan_bits | sign[nan]
    return bits.astype(np.uint64)


def oracle_truncf(x, fmt):
    """Round-to-nearest-even by search in the table of FP8 values, in exact
    f64 arithmetic (for f64 inputs: ml_dtypes converts f64 through f32 and
    rounds twice). Adjacent FP8 values differ by less than their smaller
    neighbour, so both distances below are exact (Sterbenz)."""
    dtype8, largest, nan_bits = FORMATS[fmt]
    with np.errstate(invalid="ignore"):
        wide = x.astype(np.float64)
    nan = np.isnan(wide)
    magnitude = np.minimum(np.abs(np.where(nan, 0.0, wide)), largest)
    codes = np.arange(128, dtype=np.uint8)
    table = codes.view(dtype8).astype(np.float64)
    keep = np.isfinite(table)
    codes, table = codes[keep], table[keep]  # increasing
    hi_index = np.minimum(np.searchsorted(table, magnitude), len(table) - 1)
    lo_index = np.where(table[hi_index] == magnitude, hi_index, hi_index - 1)
    lo, hi = table[lo_index], table[hi_index]
    d_lo, d_hi = magnitude - lo, hi - magnitude
    even_hi = (codes[hi_index] & 1) == 0
    take_hi = (d_hi < d_lo) | ((d_hi == d_lo) & even_hi & (lo_index != hi_index))
    bits = np.where(take_hi, codes[hi_index], codes[lo_index]).astype(np.uint8)
    bits |= np.signbit(wide).astype(np.uint8) << 7
    bits[nan] = nan_bits | (np.signbit(wide[nan]).astype(np.uint8) << 7)
    return bits.astype(np.uint64)


def reference_extf(fmt, dst):
    dtype, _, bits_dtype = WIDE[dst]
    x = np.arange(256, dtype=np.uint8).view(FORMATS[fmt][0])
    bits = x.astype(dtype).view(bits_dtype).astype(np.uint64)
    # The CPU pipeline's bf16 rounding (arith-expand) gives every NaN as the
    # positive quiet NaN: a NaN stays a NaN, its sign is not kept.
    if dst == "bf16":
        bits[np.isnan(x.astype(np.float32))] = ref.ANY_NAN
    return bits


def main():
    args = ref.parse_runner_arguments()
    rng = np.random.default_rng(8)

    cases = []  # (label, input array, source type, target type, expected)
    for fmt in FORMATS:
        for dst in ("f32", "f16", "bf16", "f64"):
            cases.append((f"extf {fmt} -> {dst}",
                          np.arange(256, dtype=np.uint8), fmt, dst,
                          reference_extf(fmt, dst)))
    for src in ("f16", "bf16", "f32", "f64"):
        for fmt in FORMATS:
            x = truncf_inputs(src, fmt, rng)
            expected = reference_truncf(x, fmt)
            oracle = oracle_truncf(x, fmt)
            if src == "f64":
                expected = oracle
            elif (oracle != expected).any():
                print(f"the rounding oracle disagrees with ml_dtypes on "
                      f"{src} -> {fmt}")
                print("FAIL")
                return 1
            cases.append((f"truncf {src} -> {fmt}", x, src, fmt, expected))

    lowered, ok = ref.check_conversions(cases, args.recast_opt,
                                        args.mlir_runner, args.shared_libs,
                                        args.workdir)
    # The LLVM dialect carries FP8 values as i8: no FP8 type is left.
    print("FP8 types after lowering:", len(re.findall(r"f8E\w+", lowered)))
    print("PASS" if ok else "FAIL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
