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
# CHECK: FP8 types after lowering: 0
# CHECK: extf f8E4M3FN -> f32: 256 values, 0 mismatches
# CHECK: extf f8E5M2 -> f64: 256 values, 0 mismatches
# CHECK: truncf f16 -> f8E4M3FN: 65536 values, 0 mismatches
# CHECK: truncf bf16 -> f8E5M2: 65536 values, 0 mismatches
# CHECK: truncf f32 -> f8E4M3FN: {{[0-9]+}} values, 0 mismatches
# CHECK: truncf f64 -> f8E5M2: {{[0-9]+}} values, 0 mismatches
# CHECK: PASS

import argparse
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


def dense(values, mlir_type):
    """A dense constant holding `values`' exact bytes."""
    data = np.ascontiguousarray(values).tobytes().hex().upper()
    return f'arith.constant dense<"0x{data}"> : tensor<{len(values)}x{mlir_type}>'


def conversion_func(name, src, dst, n):
    """@name converts a tensor<n x src> elementwise to dst and returns the
    result's bits, widened to i32 (i64 for f64)."""
    int_dst = "i8" if dst.startswith("f8") else WIDE[dst][1]
    out = "i64" if dst == "f64" else "i32"
    op = "arith.extf" if src.startswith("f8") else "arith.truncf"
    if src.startswith("f8"):
        body_in = (f"%f = arith.bitcast %a : i8 to {src}\n"
                   f"    %c = {op} %f : {src} to {dst}")
        arg_type = "i8"
    else:
        body_in = f"%c = {op} %a : {src} to {dst}"
        arg_type = src
    widen = (f"%w = arith.extui %b : {int_dst} to {out}" if int_dst != out
             else f"%w = arith.addi %b, %zero : {out}")
    zero = f"%zero = arith.constant 0 : {out}\n    " if int_dst == out else ""
    return f"""
func.func @{name}(%x: tensor<{n}x{arg_type}>) -> tensor<{n}x{out}> {{
  %e = tensor.empty() : tensor<{n}x{out}>
  %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}}
      ins(%x : tensor<{n}x{arg_type}>) outs(%e : tensor<{n}x{out}>) {{
  ^bb0(%a: {arg_type}, %o: {out}):
    {zero}{body_in}
    %b = arith.bitcast %c : {dst} to {int_dst}
    {widen}
    linalg.yield %w : {out}
  }} -> tensor<{n}x{out}>
  return %r : tensor<{n}x{out}>
}}
"""


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
    return x.astype(dtype).view(bits_dtype).astype(np.uint64)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-opt", required=True)
    parser.add_argument("--mlir-runner", required=True)
    parser.add_argument("--shared-libs", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    rng = np.random.default_rng(8)

    cases = []  # (label, func name, input array, input mlir type, expected)
    for fmt in FORMATS:
        for dst in ("f32", "f16", "bf16", "f64"):
            cases.append((f"extf {fmt} -> {dst}",
                          np.arange(256, dtype=np.uint8), "i8", fmt, dst,
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
            cases.append((f"truncf {src} -> {fmt}", x, src, src, fmt,
                          expected))

    funcs, calls = [], []
    for k, (label, x, arg_type, src, dst, _) in enumerate(cases):
        n = len(x)
        out = "i64" if dst == "f64" else "i32"
        printer = "printMemrefI64" if out == "i64" else "printMemrefI32"
        funcs.append(conversion_func(f"case{k}", src, dst, n))
        calls.append(f"""
  %x{k} = {dense(x, arg_type)}
  %r{k} = call @case{k}(%x{k}) : (tensor<{n}x{arg_type}>) -> tensor<{n}x{out}>
  %u{k} = tensor.cast %r{k} : tensor<{n}x{out}> to tensor<*x{out}>
  call @{printer}(%u{k}) : (tensor<*x{out}>) -> ()""")
    module = "\n".join(funcs) + """
func.func private @printMemrefI32(tensor<*xi32>)
func.func private @printMemrefI64(tensor<*xi64>)
func.func @main() {""" + "".join(calls) + "\n  return\n}\n"
    source = os.path.join(args.workdir, "conversions.mlir")
    with open(source, "w") as f:
        f.write(module)

    lowered, outputs = ref.lower_and_run(args.recast_opt, args.mlir_runner,
                                         args.shared_libs, source,
                                         "--recast-lower-to-cpu")
    # The LLVM dialect carries FP8 values as i8: no FP8 type is left.
    print("FP8 types after lowering:", len(re.findall(r"f8E\w+", lowered)))
    if len(outputs) != len(cases):
        print(f"expected {len(cases)} outputs, got {len(outputs)}")
        print("FAIL")
        return 1

    ok = True
    for (label, x, _, src, dst, expected), text in zip(cases, outputs):
        mask = (1 << 64) - 1 if dst == "f64" else (1 << 32) - 1
        got = np.array([int(v) & mask for v in text.split(",")],
                       dtype=np.uint64)
        bad = np.nonzero(got != expected)[0]
        print(f"{label}: {len(x)} values, {len(bad)} mismatches")
        for i in bad[:8]:
            raw = x[i:i + 1].view(np.uint8 if x.dtype == np.uint8 else WIDE[src][2])[0]
            print(f"  input {x[i]!r} (bits {int(raw):#x}): got {int(got[i]):#x}, "
                  f"expected {int(expected[i]):#x}")
        ok = ok and len(bad) == 0
    print("PASS" if ok else "FAIL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
