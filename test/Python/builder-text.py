"""Unit checks of python/recast/builder.py's text generation (no tools needed).

Float literals MLIR can parse, SSA names that never shadow an outer value
inside a region, shape checking of broadcasts, and the argument order and
attributes of a generated training step.
"""

# RUN: %python %s --python=%recast_src_root/python

import argparse
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--python", required=True)
    args = parser.parse_args()
    sys.path.insert(0, args.python)
    from recast import builder as b

    failures = []

    def check(ok, what):
        print(("PASS " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    # MLIR float literals need a '.' before any exponent.
    check([b.format_float(v) for v in (1e-05, 1.0, -1e9, 0.125, 3e38, 2.0 ** -24)]
          == ["1.0e-05", "1.0", "-1000000000.0", "0.125", "3.0e+38", "5.960464477539063e-08"],
          "format_float writes parseable literals")
    try:
        b.format_float(float("inf"))
        check(False, "format_float rejects infinities")
    except ValueError:
        check(True, "format_float rejects infinities")
    check(float(b.format_float(b.F32_LOWEST)) == -3.4028234663852886e38,
          "the max identity is the lowest finite f32, not -inf")

    # Region names must not redefine a value of the function (MLIR rejects it).
    m = b.Model("names")
    x = m.input("x", (4,))
    out = m.input("out", (4,))
    f = m.loss
    y = f.ew(lambda s, v, w: s.addf(v, w), x, out)
    m.set_loss(f.reduce_sum(y, (0,)))
    text = m.render_loss_only()
    body = text[text.index("^bb0"):]
    check("^bb0(%x0: f32, %x1: f32, %out_1: f32)" in body,
          "block arguments avoid the function's names (%out -> %out_1)")

    try:
        f.ew(lambda s, v, w: s.addf(v, w), x, b.At(f.empty((3,)), (0,)))
        check(False, "a broadcast with mismatched sizes is rejected")
    except ValueError:
        check(True, "a broadcast with mismatched sizes is rejected")

    # Parameters first in both signatures whatever the declaration order;
    # explicit initializers only where the default is not meant.
    m = b.Model("order")
    x = m.input("x", (2, 3))
    w = m.param("w", (3, 3))
    g = m.param("g", (3,), init="ones")
    f = m.loss
    m.set_loss(f.mse(f.layer_norm(f.matmul(x, w), g, f.full((3,), 0.0)), x))
    text = m.render_train_step(lr=0.5)
    check("@loss(%w: tensor<3x3xf32>,\n" in text and "@train_step(%w: tensor<3x3xf32> {recast.param},"
          in text, "parameters come first")
    check('%g: tensor<3xf32> {recast.param, recast.init = "ones"}' in text,
          "explicit recast.init is written next to recast.param")
    check("{wrt = array<i64: 0, 1>}" in text and "return %loss, %w_new, %g_new" in text,
          "train_step differentiates every parameter and returns their updates")
    loss_only = m.render_loss_only()
    check("func.func @loss(%w: tensor<3x3xf32> {recast.init = \"fan_in\"}" in loss_only
          and "train_step" not in loss_only, "the loss-only module spells out the default initializers")
    check(m.parameter_count == 12, "parameter count")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
