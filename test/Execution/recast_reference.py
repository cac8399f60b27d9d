"""Shared helpers for recast's numpy reference tests.

This module mirrors, bit for bit, how recast-run initializes function arguments
from a seed, so that a reference test can reproduce a default `recast-run
--seed=S` run without passing any data, and it holds the .npy and comparison
helpers and the FP32 reference models those tests share.

Initialization scheme (all integer arithmetic modulo 2^64):

    splitmix64(z): z += 0x9E3779B97F4A7C15
                   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
                   z = (z ^ (z >> 27)) * 0x94D049BB133111EB
                   return z ^ (z >> 31)
    for the argument at position i of the signature and run seed S:
      base    = splitmix64(S + splitmix64(i))
      bits[k] = splitmix64(base + k)       k = row-major flat index
      u[k]    = (bits[k] >> 40) * 2^-24    float64 in [0, 1)

    kinds: zeros | ones | fill:<v> | uniform:<a> | fan_in | onehot | index:<N>
    defaults: recast.param of rank >= 2 -> fan_in, of rank <= 1 -> zeros;
              any other float argument (the batch) -> uniform:1;
              an explicit recast.init attribute overrides the default.

Run directly, the module checks its splitmix64 against published test vectors
and a few properties of the kinds.
"""

# RUN: %python %s

import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass

import numpy as np

MASK64 = (1 << 64) - 1

_GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


# ----------------------------------------------------------------------------
# The initialization scheme
# ----------------------------------------------------------------------------

def splitmix64(z):
    """splitmix64 finalizer over uint64 values (array or int), wrapping mod 2^64.

    Returns a uint64 ndarray of the same shape as `z` (0-d for a scalar).
    """
    z = np.array(z, dtype=np.uint64)
    # uint64 array arithmetic wraps silently; errstate also quiets the
    # overflow warnings numpy emits when a 0-d input decays to a scalar.
    with np.errstate(over="ignore"):
        z = z + _GOLDEN_GAMMA
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        return np.array(z ^ (z >> np.uint64(31)), dtype=np.uint64)


def argument_bits(seed, arg_index, count):
    """The `count` raw 64-bit draws of the argument at `arg_index` for `seed`."""
    seed_word = np.uint64(int(seed) & MASK64)
    with np.errstate(over="ignore"):
        base = splitmix64(seed_word + splitmix64(int(arg_index)))
        return splitmix64(base + np.arange(count, dtype=np.uint64))


def unit_uniform(bits):
    """Top 24 bits of each draw as a float64 in [0, 1), exact in float32 too."""
    return (bits >> np.uint64(40)).astype(np.float64) * 2.0 ** -24


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def init_array(kind, shape, dtype, seed, arg_index):
    """The initial value recast-run gives the argument at `arg_index`.

    `kind` is one of the scheme's kinds (see the module docstring); `dtype` is
    the argument's element type as a numpy dtype.
    """
    shape = tuple(int(d) for d in shape)
    dtype = np.dtype(dtype)
    numel = _numel(shape)

    if kind == "zeros":
        return np.zeros(shape, dtype)
    if kind == "ones":
        return np.ones(shape, dtype)
    if kind.startswith("fill:"):
        return np.full(shape, float(kind[len("fill:"):]), dtype)

    if kind == "fan_in" or kind.startswith("uniform:"):
        if kind == "fan_in":
            if len(shape) < 2:
                raise ValueError("fan_in needs a tensor of rank >= 2, got shape %s" % (shape,))
            bound = 1.0 / math.sqrt(_numel(shape[:-1]))
        else:
            bound = float(kind[len("uniform:"):])
        u = unit_uniform(argument_bits(seed, arg_index, numel))
        # Scaled in float64, then rounded once to the element type.
        return ((2.0 * u - 1.0) * bound).astype(dtype).reshape(shape)

    if kind == "onehot":
        if len(shape) < 1:
            raise ValueError("onehot needs a tensor of rank >= 1")
        classes = shape[-1]
        rows = numel // classes
        labels = argument_bits(seed, arg_index, rows) % np.uint64(classes)
        out = np.zeros((rows, classes), dtype)
        out[np.arange(rows), labels.astype(np.int64)] = 1
        return out.reshape(shape)

    if kind.startswith("index:"):
        bound = int(kind[len("index:"):])
        values = argument_bits(seed, arg_index, numel) % np.uint64(bound)
        return values.astype(dtype).reshape(shape)

    raise ValueError("unknown init kind %r" % kind)


@dataclass
class ArgSpec:
    """One function argument as recast-run sees it."""
    name: str          # SSA name in the source, without '%'
    shape: tuple
    dtype: object = np.float32
    param: bool = False    # marked {recast.param}
    init: str = None       # explicit {recast.init = "..."}, if any

    def init_kind(self):
        if self.init is not None:
            return self.init
        if self.param:
            return "fan_in" if len(self.shape) >= 2 else "zeros"
        if np.issubdtype(np.dtype(self.dtype), np.floating):
            return "uniform:1"
        raise ValueError("argument %s has no default initializer; give it recast.init" % self.name)


def init_arguments(specs, seed):
    """Initial values of every argument of a signature, keyed by name."""
    return {spec.name: init_array(spec.init_kind(), spec.shape, spec.dtype, seed, index)
            for index, spec in enumerate(specs)}


# ----------------------------------------------------------------------------
# .npy files and comparisons
# ----------------------------------------------------------------------------

def save_npy(path, array, dtype=np.float32):
    """Writes `array` as a C-ordered little-endian .npy of `dtype`."""
    array = np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<"))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    np.save(path, array, allow_pickle=False)
    return path


def load_npy(path, shape=None, dtype=None):
    """Loads a .npy written by recast-run, checking its shape and dtype if given."""
    if not os.path.isfile(path):
        raise FileNotFoundError("missing output file %s" % path)
    array = np.load(path, allow_pickle=False)
    if dtype is not None and array.dtype != np.dtype(dtype):
        raise ValueError("%s: dtype %s, expected %s" % (path, array.dtype, np.dtype(dtype)))
    if shape is not None and array.shape != tuple(shape):
        raise ValueError("%s: shape %s, expected %s" % (path, array.shape, tuple(shape)))
    return array


def bitwise_mismatches(actual, expected):
    """Number of elements whose bit patterns differ, and the first such index."""
    a = np.ascontiguousarray(actual)
    e = np.ascontiguousarray(expected)
    if a.dtype != e.dtype or a.shape != e.shape:
        return a.size or 1, None
    unsigned = np.dtype("u%d" % a.dtype.itemsize)
    differ = a.view(unsigned) != e.view(unsigned)
    count = int(np.count_nonzero(differ))
    first = tuple(int(i) for i in np.argwhere(differ)[0]) if count else None
    return count, first


def saved_arrays_equal(dir_a, dir_b, count=None):
    """Whether the arrays `recast-run --save` wrote into dir_a (every .npy,
    final parameters, state and losses) equal those of the same names in
    dir_b; false when there are none, or not `count` of them when given."""
    files = sorted(f for f in os.listdir(dir_a) if f.endswith(".npy"))
    if not files or (count is not None and len(files) != count):
        return False
    return all(np.array_equal(np.load(os.path.join(dir_a, f)),
                              np.load(os.path.join(dir_b, f))) for f in files)


# ----------------------------------------------------------------------------
# Reference models (FP32 throughout, like the IR)
# ----------------------------------------------------------------------------

def lower_and_run(recast_opt, mlir_runner, shared_libs, module, pipeline):
    """Lowers the file `module` with `recast-opt <pipeline>`, runs its @main
    with mlir-runner and returns the lowered text and the contents of every
    printMemref* call, in order, as strings of comma-separated numbers."""
    lowered = subprocess.run([recast_opt, module, pipeline], check=True,
                             capture_output=True, text=True).stdout
    run = subprocess.run([mlir_runner, "-e", "main", "-entry-point-result=void",
                          "-shared-libs=" + shared_libs],
                         input=lowered, check=True, capture_output=True,
                         text=True)
    return lowered, re.findall(r"data =\s*\n\[([^\]]*)\]", run.stdout)


def parse_runner_arguments():
    """The arguments of a test that lowers MLIR and runs it with mlir-runner:
    --recast-opt, --mlir-runner, --shared-libs and --workdir (created)."""
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-opt", required=True)
    parser.add_argument("--mlir-runner", required=True)
    parser.add_argument("--shared-libs", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    return args


# Float type -> (numpy dtype, integer type of its width, numpy uint of it).
FLOAT_TYPES = {
    "f16": (np.float16, "i16", np.uint16),
    "f32": (np.float32, "i32", np.uint32),
    "f64": (np.float64, "i64", np.uint64),
}


# An expected bit pattern that stands for any NaN of the target type.
ANY_NAN = np.uint64((1 << 64) - 1)


def _float_types():
    import ml_dtypes
    types = dict(FLOAT_TYPES)
    types["bf16"] = (ml_dtypes.bfloat16, "i16", np.uint16)
    types["f8E4M3FN"] = (ml_dtypes.float8_e4m3fn, "i8", np.uint8)
    types["f8E5M2"] = (ml_dtypes.float8_e5m2, "i8", np.uint8)
    return types


def _dense(values, mlir_type):
    """A dense constant holding `values`' exact bytes."""
    data = np.ascontiguousarray(values).tobytes().hex().upper()
    return f'arith.constant dense<"0x{data}"> : tensor<{len(values)}x{mlir_type}>'


def _conversion_func(name, src, dst, n):
    """@name converts a tensor<n x src> (given as its bits for an FP8 source)
    elementwise to dst and returns the result's bits, widened to i32 (i64 for
    f64)."""
    types = _float_types()
    int_src, int_dst = types[src][1], types[dst][1]
    out = "i64" if dst == "f64" else "i32"
    op = "arith.extf" if types[src][0](0).itemsize < types[dst][0](0).itemsize \
        else "arith.truncf"
    if int_src == "i8":
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


def check_conversions(cases, recast_opt, mlir_runner, shared_libs, workdir,
                      pipeline="--recast-lower-to-cpu"):
    """Compiles one function per case (label, x, src, dst, expected bits),
    where x holds values of type src (bits for an FP8 source), runs them with
    mlir-runner after `pipeline` and prints each case's mismatches with the
    expected bit patterns. Returns (lowered text, whether all matched)."""
    types = _float_types()
    funcs, calls = [], []
    for k, (_, x, src, dst, _) in enumerate(cases):
        n = len(x)
        arg_type = "i8" if types[src][1] == "i8" else src
        out = "i64" if dst == "f64" else "i32"
        printer = "printMemrefI64" if out == "i64" else "printMemrefI32"
        funcs.append(_conversion_func(f"case{k}", src, dst, n))
        calls.append(f"""
  %x{k} = {_dense(x, arg_type)}
  %r{k} = call @case{k}(%x{k}) : (tensor<{n}x{arg_type}>) -> tensor<{n}x{out}>
  %u{k} = tensor.cast %r{k} : tensor<{n}x{out}> to tensor<*x{out}>
  call @{printer}(%u{k}) : (tensor<*x{out}>) -> ()""")
    module = "\n".join(funcs) + """
func.func private @printMemrefI32(tensor<*xi32>)
func.func private @printMemrefI64(tensor<*xi64>)
func.func @main() {""" + "".join(calls) + "\n  return\n}\n"
    os.makedirs(workdir, exist_ok=True)
    source = os.path.join(workdir, "conversions.mlir")
    with open(source, "w") as f:
        f.write(module)
    lowered, outputs = lower_and_run(recast_opt, mlir_runner, shared_libs,
                                     source, pipeline)
    if len(outputs) != len(cases):
        print(f"expected {len(cases)} outputs, got {len(outputs)}")
        return lowered, False
    ok = True
    for (label, x, src, dst, expected), text in zip(cases, outputs):
        mask = (1 << 64) - 1 if dst == "f64" else (1 << 32) - 1
        got = np.array([int(v) & mask for v in text.split(",")],
                       dtype=np.uint64)
        # ANY_NAN expects a NaN of the target type, whatever its bits.
        dst_type, _, dst_bits = types[dst]
        got_nan = np.isnan(got.astype(dst_bits).view(dst_type).astype(np.float64))
        bad = np.nonzero((got != expected) &
                         ~((expected == ANY_NAN) & got_nan))[0]
        print(f"{label}: {len(x)} values, {len(bad)} mismatches")
        for i in bad[:8]:
            raw = x[i:i + 1].view(types[src][2])[0]
            print(f"  input {x[i]!r} (bits {int(raw):#x}): got {int(got[i]):#x}, "
                  f"expected {int(expected[i]):#x}")
        ok = ok and len(bad) == 0
    return lowered, ok


def mlp_train_step(w1, b1, w2, b2, x, y, lr=0.1):
    """One step of examples/mlp/train_step.mlir: returns (loss, w1, b1, w2, b2).

    Every intermediate is float32, in the same order of operations as the IR;
    only the summation order inside matmuls and reductions differs.
    """
    f32 = np.float32
    batch = x.shape[0]
    inv_batch = f32(1.0 / batch)

    # forward
    h = np.maximum(x @ w1 + b1, f32(0))
    logits = h @ w2 + b2
    # loss: stable softmax cross-entropy, averaged over the batch
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    sumexp = exp.sum(axis=1)
    label_logit = (y * shifted).sum(axis=1)
    loss = f32((np.log(sumexp) - label_logit).sum(dtype=f32) * inv_batch)
    # backward
    dlogits = (exp / sumexp[:, None] - y) * inv_batch
    dw2 = h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dh = np.where(h > 0, dlogits @ w2.T, f32(0))
    dw1 = x.T @ dh
    db1 = dh.sum(axis=0)
    # update
    lr = f32(lr)
    return (loss, w1 - lr * dw1, b1 - lr * db1, w2 - lr * dw2, b2 - lr * db2)


def mlp_train(params, x, y, steps, lr=0.1):
    """Runs `steps` steps on a fixed batch; returns (losses [steps] float32, params)."""
    w1, b1, w2, b2 = (np.asarray(params[n], np.float32) for n in ("w1", "b1", "w2", "b2"))
    x = np.asarray(x, np.float32)
    y = np.asarray(y, np.float32)
    losses = np.zeros(steps, np.float32)
    for step in range(steps):
        losses[step], w1, b1, w2, b2 = mlp_train_step(w1, b1, w2, b2, x, y, lr)
    return losses, {"w1": w1, "b1": b1, "w2": w2, "b2": b2}


# ----------------------------------------------------------------------------
# Self-test
# ----------------------------------------------------------------------------

def _self_test():
    failures = []

    def check(ok, what):
        print(("PASS " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    # Reference splitmix64 stream from state 0 (Vigna's splitmix64.c): the
    # n-th output is splitmix64 applied to (n-1) * golden gamma.
    gamma = 0x9E3779B97F4A7C15
    states = [(n * gamma) & MASK64 for n in range(3)]
    expected = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    got = [int(v) for v in splitmix64(np.array(states, dtype=np.uint64))]
    check(got == expected, "splitmix64 matches the reference stream")
    check(int(splitmix64(states[1])) == expected[1], "splitmix64 on a scalar")

    # Wrap-around of seed + splitmix64(i) must be modulo 2^64, as in C.
    big_seed = MASK64
    bits = argument_bits(big_seed, 3, 4)
    base = splitmix64((big_seed + int(splitmix64(3))) & MASK64)
    manual = [int(splitmix64((int(base) + k) & MASK64)) for k in range(4)]
    check([int(b) for b in bits] == manual, "argument bits wrap modulo 2^64")

    w = init_array("fan_in", (784, 256), np.float32, 7, 0)
    bound = np.float32(1 / 28)
    check(w.dtype == np.float32 and w.shape == (784, 256)
          and np.abs(w).max() <= bound and abs(float(w.mean())) < 1e-3,
          "fan_in is within +-1/sqrt(fan_in) and centred")
    check(not np.array_equal(w, init_array("fan_in", (784, 256), np.float32, 8, 0)),
          "the seed changes the draws")
    check(not np.array_equal(init_array("uniform:1", (16,), np.float32, 7, 1),
                             init_array("uniform:1", (16,), np.float32, 7, 2)),
          "the argument position changes the draws")

    y = init_array("onehot", (64, 10), np.float32, 7, 5)
    check(np.array_equal(y.sum(axis=1), np.ones(64, np.float32)) and set(np.unique(y)) <= {0, 1},
          "onehot rows hold exactly one 1")
    labels = argument_bits(7, 5, 64) % np.uint64(10)
    check(np.array_equal(y.argmax(axis=1), labels.astype(np.int64)),
          "onehot classes are bits[row] % classes")

    idx = init_array("index:5", (3, 7), np.int64, 7, 2)
    check(idx.min() >= 0 and idx.max() < 5, "index:N is in [0, N)")
    check(np.array_equal(init_array("fill:-2.5", (3,), np.float32, 0, 0),
                         np.full(3, -2.5, np.float32)), "fill:v")

    specs = [ArgSpec("w", (4, 3), param=True), ArgSpec("b", (3,), param=True),
             ArgSpec("x", (2, 4)), ArgSpec("t", (2, 3), init="onehot")]
    check([s.init_kind() for s in specs] == ["fan_in", "zeros", "uniform:1", "onehot"],
          "default kinds")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(_self_test())
