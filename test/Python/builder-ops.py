"""Checks each op and layer of python/recast/builder.py against numpy by running it.

For every case the builder writes `@loss(inputs..., r) = sum(op(inputs) * r)`,
a random weighting r of the op's result that makes every output element
matter, and recast-run evaluates it (--entry=loss, inputs given with --arg).
The value must match numpy's float64 computation of the same sum within
RTOL of sum(|op(inputs) * r|): FP32 rounding of a few ops over at most a few
thousand terms stays below 1e-6 of that scale, while a wrong index, stride,
padding or formula changes it by far more.
"""

# RUN: %python %s --recast-run=recast-run --python=%recast_src_root/python --workdir=%t

import argparse
import math
import os
import subprocess
import sys

import numpy as np

RTOL = 1e-5


def load_builder(path):
    sys.path.insert(0, path)
    from recast import builder  # noqa: E402
    return builder


class Case:
    def __init__(self, name, inputs, build, reference):
        self.name = name
        self.inputs = inputs          # [(name, ndarray)]
        self.build = build            # (Function, *Values) -> Value
        self.reference = reference    # (*ndarrays) -> ndarray


def erf(x):
    return np.vectorize(math.erf)(x)


def np_conv(x, w, stride, pads):
    top, bottom, left, right = pads
    x = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
    kh, kw, c, f = w.shape
    n, h, wd, _ = x.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(kh):
        for j in range(kw):
            window = x[:, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride, :]
            out += window @ w[i, j]
    return out


def np_depthwise(x, w, stride, pad):
    x = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    kh, kw, c = w.shape
    n, h, wd, _ = x.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, oh, ow, c))
    for i in range(kh):
        for j in range(kw):
            out += x[:, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride, :] * w[i, j]
    return out


def np_pool(x, k, stride, pad, reduce, pad_value):
    x = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)), constant_values=pad_value)
    n, h, wd, c = x.shape
    oh, ow = (h - k) // stride + 1, (wd - k) // stride + 1
    windows = [x[:, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride, :]
               for i in range(k) for j in range(k)]
    return reduce(np.stack(windows), axis=0)


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_norm(x, g, b, axes):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * g + b


def make_cases(b, rng):
    At = b.At

    def u(*shape, low=-1.0, high=1.0):
        return rng.uniform(low, high, shape).astype(np.float32)

    gelu_tanh = lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))  # noqa: E731
    cases = [
        Case("matmul", [("a", u(5, 7)), ("b", u(7, 3))], lambda f, a, c: f.matmul(a, c), lambda a, c: a @ c),
        Case("batch_matmul", [("a", u(2, 5, 7)), ("b", u(2, 7, 3))],
             lambda f, a, c: f.batch_matmul(a, c), lambda a, c: a @ c),
        Case("transpose", [("x", u(2, 3, 4, 5))], lambda f, x: f.transpose(x, (0, 2, 3, 1)),
             lambda x: x.transpose(0, 2, 3, 1)),
        Case("broadcast", [("x", u(3, 4))], lambda f, x: f.broadcast(x, (3, 2, 4), (1,)),
             lambda x: np.broadcast_to(x[:, None, :], (3, 2, 4))),
        Case("expand_collapse", [("x", u(6, 4))],
             lambda f, x: f.collapse_shape(f.transpose(f.expand_shape(x, [[0, 1], [2]], (2, 3, 4)), (1, 0, 2)),
                                           [[0], [1, 2]]),
             lambda x: x.reshape(2, 3, 4).transpose(1, 0, 2).reshape(3, 8)),
        Case("extract_slice_strided", [("x", u(4, 9, 5))],
             lambda f, x: f.extract_slice(x, (1, 2, 0), (2, 3, 5), (1, 2, 1)), lambda x: x[1:3, 2:7:2, :]),
        Case("extract_slice_drop", [("x", u(3, 4))],
             lambda f, x: f.extract_slice(x, (2, 0), (1, 4), drop_dims=(0,)), lambda x: x[2]),
        Case("concat", [("a", u(2, 3, 4)), ("c", u(2, 3, 2))], lambda f, a, c: f.concat([a, c], axis=2),
             lambda a, c: np.concatenate([a, c], axis=2)),
        Case("pad", [("x", u(2, 3, 4))], lambda f, x: f.pad(x, (0, 1, 2), (1, 0, 3), 0.5),
             lambda x: np.pad(x, ((0, 1), (1, 0), (2, 3)), constant_values=0.5)),
        Case("arith", [("a", u(4, 5)), ("c", u(4, 5, low=0.5, high=2.0))],
             lambda f, a, c: f.ew(lambda s, x, y: s.divf(s.subf(s.mulf(x, y), s.negf(x)), s.addf(y, 1.0)), a, c),
             lambda a, c: (a * c + a) / (c + 1)),
        Case("broadcast_operand", [("x", u(3, 4)), ("r0", u(3)), ("c0", u(4))],
             lambda f, x, r, c: f.ew(lambda s, v, p, q: s.maximumf(s.addf(v, p), q), x, At(r, (0,)), At(c, (1,))),
             lambda x, r, c: np.maximum(x + r[:, None], c[None, :])),
        Case("math", [("x", u(3, 5, low=0.2, high=3.0))],
             lambda f, x: f.ew(lambda s, v: s.addf(s.addf(s.exp(s.negf(v)), s.log(v)),
                                                  s.addf(s.sqrt(v), s.rsqrt(v))), x),
             lambda x: np.exp(-x) + np.log(x) + np.sqrt(x) + 1 / np.sqrt(x)),
        Case("tanh_sigmoid", [("x", u(3, 5, low=-4, high=4))],
             lambda f, x: f.add(f.tanh(x), f.sigmoid(x)), lambda x: np.tanh(x) + 1 / (1 + np.exp(-x))),
        Case("relu_relu6", [("x", u(4, 6, low=-8, high=8))], lambda f, x: f.add(f.relu(x), f.relu6(x)),
             lambda x: np.maximum(x, 0) + np.clip(x, 0, 6)),
        Case("gelu_tanh", [("x", u(4, 6, low=-4, high=4))], lambda f, x: f.gelu(x), gelu_tanh),
        Case("gelu_erf", [("x", u(4, 6, low=-4, high=4))], lambda f, x: f.gelu(x, "erf"),
             lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
        Case("reduce_sum", [("x", u(3, 4, 5))], lambda f, x: f.reduce_sum(x, (0, 2)), lambda x: x.sum(axis=(0, 2))),
        Case("reduce_max", [("x", u(3, 4, 5))], lambda f, x: f.reduce_max(x, (1,)), lambda x: x.max(axis=1)),
        Case("softmax", [("x", u(3, 4, 6, low=-3, high=3))], lambda f, x: f.softmax(x), np_softmax),
        Case("log_softmax", [("x", u(3, 6, low=-3, high=3))], lambda f, x: f.log_softmax(x),
             lambda x: np.log(np_softmax(x))),
        Case("layer_norm", [("x", u(4, 8, low=-2, high=3)), ("g", u(8)), ("c", u(8))],
             lambda f, x, g, c: f.layer_norm(x, g, c), lambda x, g, c: np_norm(x, g, c, (-1,))),
        Case("batch_norm", [("x", u(2, 3, 3, 4, low=-2, high=3)), ("g", u(4)), ("c", u(4))],
             lambda f, x, g, c: f.batch_norm(x, g, c), lambda x, g, c: np_norm(x, g, c, (0, 1, 2))),
        Case("causal_mask_softmax", [("x", u(2, 5, 5, low=-3, high=3))],
             lambda f, x: f.softmax(f.causal_mask(x, scale=0.5)),
             lambda x: np_softmax(np.where(np.tril(np.ones((5, 5), bool)), 0.5 * x, -1e4))),
        Case("conv_s1_p1", [("x", u(2, 5, 6, 3)), ("w", u(3, 3, 3, 4))], lambda f, x, w: f.conv2d(x, w, 1, 1),
             lambda x, w: np_conv(x, w, 1, (1, 1, 1, 1))),
        Case("conv_s2_p1", [("x", u(2, 7, 8, 3)), ("w", u(3, 3, 3, 2))], lambda f, x, w: f.conv2d(x, w, 2, 1),
             lambda x, w: np_conv(x, w, 2, (1, 1, 1, 1))),
        Case("conv_1x1_s2", [("x", u(1, 6, 6, 3)), ("w", u(1, 1, 3, 5))], lambda f, x, w: f.conv2d(x, w, 2, 0),
             lambda x, w: np_conv(x, w, 2, (0, 0, 0, 0))),
        Case("conv_pad_end", [("x", u(1, 4, 4, 2)), ("w", u(2, 2, 2, 3))],
             lambda f, x, w: f.conv2d(x, w, 1, (0, 1, 0, 1)), lambda x, w: np_conv(x, w, 1, (0, 1, 0, 1))),
        Case("depthwise_s1", [("x", u(2, 5, 5, 3)), ("w", u(3, 3, 3))],
             lambda f, x, w: f.depthwise_conv2d(x, w, 1, 1), lambda x, w: np_depthwise(x, w, 1, 1)),
        Case("depthwise_s2", [("x", u(1, 8, 8, 4)), ("w", u(3, 3, 4))],
             lambda f, x, w: f.depthwise_conv2d(x, w, 2, 1), lambda x, w: np_depthwise(x, w, 2, 1)),
        Case("max_pool_padded", [("x", u(2, 5, 5, 3, low=-5, high=-1))],
             lambda f, x: f.max_pool2d(x, 3, 2, padding=1),
             lambda x: np_pool(x, 3, 2, 1, np.max, -np.inf)),
        Case("max_pool_2x2", [("x", u(1, 6, 4, 2))], lambda f, x: f.max_pool2d(x, 2),
             lambda x: np_pool(x, 2, 2, 0, np.max, 0)),
        Case("avg_pool", [("x", u(1, 6, 6, 2))], lambda f, x: f.avg_pool2d(x, 3, 3),
             lambda x: np_pool(x, 3, 3, 0, np.mean, 0)),
        Case("global_avg_pool", [("x", u(2, 3, 4, 5))], lambda f, x: f.global_avg_pool(x),
             lambda x: x.mean(axis=(1, 2))),
        Case("upsample_crop", [("x", u(1, 3, 4, 2))],
             lambda f, x: f.center_crop(f.upsample_nearest(x, 2), 4, 6),
             lambda x: x.repeat(2, axis=1).repeat(2, axis=2)[:, 1:5, 1:7, :]),
    ]

    def with_loss(name, inputs, build, reference):
        """A case whose op already is a scalar loss (r weights a 0-d result)."""
        cases.append(Case(name, inputs, build, reference))

    labels = np.eye(5, dtype=np.float32)[rng.integers(0, 5, 6)]
    with_loss("cross_entropy", [("x", u(6, 5, low=-3, high=3)), ("y", labels)],
              lambda f, x, y: f.cross_entropy(x, y),
              lambda x, y: -(y * np.log(np_softmax(x))).sum(axis=1).mean())
    with_loss("mse", [("p", u(3, 4)), ("t", u(3, 4))], lambda f, p, t: f.mse(p, t),
              lambda p, t: ((p - t) ** 2).mean())
    ids = rng.integers(0, 7, (2, 3)).astype(np.int32)
    with_loss("embedding", [("ids", ids), ("table", u(7, 4))], lambda f, i, t: f.embedding(i, t),
              lambda i, t: t[i.reshape(-1)])
    return cases


def build_module(b, case, rng):
    """@loss(inputs..., r) = sum(op(inputs) * r); returns the text and r."""
    m = b.Model(case.name)
    values = [m.input(name, array.shape, {np.dtype(np.int32): "i32"}.get(array.dtype, "f32"))
              for name, array in case.inputs]
    f = m.loss
    out = case.build(f, *values)
    r_value = rng.uniform(-1, 1, out.shape).astype(np.float32)
    r = m.input("r", out.shape)
    weighted = f.reduce(lambda s, acc, v, w: s.addf(acc, s.mulf(v, w)), out, r,
                        dims=tuple(range(out.rank)), init_value=0.0, name="weighted")
    m.set_loss(weighted)
    return m.render_loss_only(["builder case " + case.name]), r_value


def run_case(args, b, case, rng):
    directory = os.path.join(args.workdir, case.name)
    os.makedirs(directory, exist_ok=True)
    text, r = build_module(b, case, rng)
    model = os.path.join(directory, "case.mlir")
    with open(model, "w") as f:
        f.write(text)
    flags = []
    for name, array in case.inputs + [("r", r)]:
        path = os.path.join(directory, name + ".npy")
        np.save(path, array)
        flags.append("--arg=%s=%s" % (name, path))
    cmd = [args.recast_run, model, "--entry=loss", "--steps=1", "--save=" + directory] + flags
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if proc.returncode != 0:
        return "recast-run failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), proc.stdout[-2000:])
    got = float(np.load(os.path.join(directory, "losses.npy"))[0])
    out = np.asarray(case.reference(*[a.astype(np.float64) if a.dtype == np.float32 else a
                                      for _, a in case.inputs]), np.float64)
    expected = float((out * r).sum())
    scale = float(np.abs(out * r).sum())
    if not abs(got - expected) <= RTOL * scale + 1e-7:
        return "recast-run %.9g, numpy %.9g (scale %.3g, rel.err %.3g > %g)" % (
            got, expected, scale, abs(got - expected) / scale, RTOL)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recast-run", required=True)
    parser.add_argument("--python", required=True, help="the python/ directory holding recast/")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--only", action="append", default=[], help="run only these cases")
    args = parser.parse_args()
    b = load_builder(args.python)
    rng = np.random.default_rng(0)
    cases = make_cases(b, rng)
    failures = 0
    for case in cases:
        if args.only and case.name not in args.only:
            continue
        error = run_case(args, b, case, rng)
        print(("FAIL %s: %s" % (case.name, error)) if error else "PASS %s" % case.name)
        sys.stdout.flush()
        failures += bool(error)
    if failures:
        print("%d case(s) failed" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
