"""Accuracy of recast-approximate-math against libm and an exact reference.

--recast-lower-to-cpu replaces tanh, exp, expm1, log, log1p and erf by
polynomial approximations (approximate-math, on by default) so that the loops
around them vectorize. This test compiles each function over f32 inputs
twice, with the approximations and without (approximate-math=false: libm,
except expm1 and log1p, which convert-math-to-llvm computes as exp(x) - 1
and log(1 + x)), runs both with mlir-runner and measures their error in ulp
against the exact value (numpy/math in f64) on the ranges where the result
is a normal f32: dense sweeps, random bit patterns and log-uniform
magnitudes. Special inputs (zeros, infinities, NaN, overflow, underflow,
tiny arguments) must give the exact result within the same bound, except
that results below the smallest normal f32 may flush to zero. Subnormal
inputs are not measured: log takes them for the smallest normal
(log(1e-38) is -87.34, not -87.50). The bounds
are the measured errors rounded up: a change of approximation that loses
accuracy fails here.
"""

# RUN: %python %s --recast-opt=recast-opt --mlir-runner=mlir-runner --shared-libs=%mlir_runner_utils,%mlir_c_runner_utils --workdir=%t | FileCheck %s
# CHECK: libm calls left: 0
# CHECK: tanh: {{.*}} within bound
# CHECK: exp: {{.*}} within bound
# CHECK: expm1: {{.*}} within bound
# CHECK: log: {{.*}} within bound
# CHECK: log1p: {{.*}} within bound
# CHECK: erf: {{.*}} within bound
# CHECK: PASS

import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import recast_reference as ref  # noqa: E402

# Largest error in ulp allowed for each approximation, and the inputs it is
# measured on (the range training sees, where the result is a normal f32).
FUNCTIONS = {
    "tanh": (np.tanh, (-12.0, 12.0)),
    "exp": (np.exp, (-87.0, 88.0)),
    "expm1": (np.expm1, (-20.0, 88.0)),
    "log": (np.log, (1e-30, 1e30)),
    "log1p": (np.log1p, (-0.999, 1e30)),
    "erf": (np.vectorize(math.erf), (-6.0, 6.0)),
}
BOUNDS = {"tanh": 5.0, "exp": 1.0, "expm1": 3.0, "log": 1.0, "log1p": 2.0,
          "erf": 4.0}
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.2e-38, -1.2e-38,
                    89.0, 100.0, -89.0, -104.0, -200.0, 3.4e38, -3.4e38,
                    1.0, -1.0, -0.999999, 1e-8, -1e-8], dtype=np.float32)


def inputs(name, rng):
    lo, hi = FUNCTIONS[name][1]
    dense = np.linspace(lo, hi, 40001, dtype=np.float64)
    if lo > 0:
        logs = 2.0 ** rng.uniform(np.log2(lo), np.log2(hi), 20000)
    else:
        logs = np.concatenate([2.0 ** rng.uniform(-30, np.log2(hi), 10000),
                               -(2.0 ** rng.uniform(-30, np.log2(-lo), 10000))])
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    with np.errstate(invalid="ignore"):
        random = bits.view(np.float32).astype(np.float64)
    random = random[np.isfinite(random) & (random >= lo) & (random <= hi)]
    measured = np.concatenate([dense, logs, random]).astype(np.float32)
    return np.concatenate([measured, SPECIAL]), len(measured)


def func(name, n):
    return f"""
func.func @{name}(%x: tensor<{n}xf32>) -> tensor<{n}xi32> {{
  %e = tensor.empty() : tensor<{n}xi32>
  %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}}
      ins(%x : tensor<{n}xf32>) outs(%e : tensor<{n}xi32>) {{
  ^bb0(%a: f32, %o: i32):
    %y = math.{name} %a : f32
    %b = arith.bitcast %y : f32 to i32
    linalg.yield %b : i32
  }} -> tensor<{n}xi32>
  return %r : tensor<{n}xi32>
}}
"""


def run(args, module, approximate):
    lowered, outputs = ref.lower_and_run(
        args.recast_opt, args.mlir_runner, args.shared_libs, module,
        f"--recast-lower-to-cpu=approximate-math={str(approximate).lower()}")
    results = [np.array([int(v) & 0xFFFFFFFF for v in text.split(",")],
                        dtype=np.uint32).view(np.float32) for text in outputs]
    return lowered, results


def ulp_error(got, exact):
    """|got - exact| in units of the f32 spacing at the exact value."""
    with np.errstate(over="ignore"):
        rounded = exact.astype(np.float32)
    spacing = np.spacing(np.abs(rounded)).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


def special_ok(got, exact, bound):
    """Exact where the result is a NaN, an infinity or a zero; within the
    bound elsewhere, or zero where the exact result is below the smallest
    normal f32 (the approximations flush it)."""
    with np.errstate(all="ignore"):
        rounded = exact.astype(np.float32)
        error = ulp_error(got, exact)
    tiny = np.abs(exact) < np.finfo(np.float32).tiny
    return np.where(np.isnan(exact), np.isnan(got),
           np.where(np.isinf(rounded), got == rounded,
           np.where(tiny, (got == 0) | (error <= bound), error <= bound)))


def main():
    args = ref.parse_runner_arguments()
    rng = np.random.default_rng(5)

    cases = []
    funcs, calls = [], []
    for k, name in enumerate(FUNCTIONS):
        x, measured = inputs(name, rng)
        cases.append((name, x, measured))
        n = len(x)
        data = x.tobytes().hex().upper()
        funcs.append(func(name, n))
        calls.append(f"""
  %x{k} = arith.constant dense<"0x{data}"> : tensor<{n}xf32>
  %r{k} = call @{name}(%x{k}) : (tensor<{n}xf32>) -> tensor<{n}xi32>
  %u{k} = tensor.cast %r{k} : tensor<{n}xi32> to tensor<*xi32>
  call @printMemrefI32(%u{k}) : (tensor<*xi32>) -> ()""")
    module = os.path.join(args.workdir, "math.mlir")
    with open(module, "w") as f:
        f.write("\n".join(funcs) + """
func.func private @printMemrefI32(tensor<*xi32>)
func.func @main() {""" + "".join(calls) + "\n  return\n}\n")

    lowered, approx = run(args, module, True)
    calls_left = re.findall(r"llvm\.call @(tanhf|expf|expm1f|logf|log1pf|erff)\b",
                            lowered)
    print("libm calls left:", len(calls_left))
    _, libm = run(args, module, False)

    ok = True
    for (name, x, measured), got, from_libm in zip(cases, approx, libm):
        with np.errstate(all="ignore"):
            exact = FUNCTIONS[name][0](x.astype(np.float64))
        body = slice(0, measured)
        normal = np.abs(exact[body].astype(np.float32)) >= np.finfo(np.float32).tiny
        error = ulp_error(got[body], exact[body])[normal]
        libm_error = ulp_error(from_libm[body], exact[body])[normal]
        worst = int(np.argmax(error))
        bound = BOUNDS[name]
        special = special_ok(got[measured:], exact[measured:], bound)
        within = error.max() <= bound and special.all()
        print(f"{name}: {normal.sum()} values, max {error.max():.2f} ulp "
              f"(without {libm_error.max():.2f}), mean {error.mean():.3f}, "
              f"worst at {x[body][normal][worst]!r}; special inputs "
              f"{'ok' if special.all() else 'wrong'}; "
              f"{'within bound' if within else f'above bound {bound}'}")
        for i in np.nonzero(~special)[0]:
            print(f"  {x[measured + i]!r}: got {got[measured + i]!r}, "
                  f"exact {exact[measured + i]!r}")
        ok = ok and within
    print("PASS" if ok else "FAIL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
