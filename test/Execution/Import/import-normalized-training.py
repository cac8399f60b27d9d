"""A loss written as torch-mlir writes it (keepdim maps with constant
results, math.fpowi, a public @loss next to the step) trains through
recast-train-step and recast-run with no hand rewrite: the pipeline's import
normalization folds the unit dimensions, autodiff differentiates x**2 as
2*x, and two SGD steps match the analytic FP32 gradient of log_softmax + MSE
computed with numpy (1e-5 relative on the losses and the final weights).
The same step under a remat budget keeps its losses bitwise.

# RUN: rm -rf %t && mkdir -p %t
# RUN: recast-opt %S/Inputs/torch-style-loss.mlir -recast-train-step="lr=0.1" -o %t/step.mlir
# RUN: %python %s --recast-run=recast-run --step=%t/step.mlir --workdir=%t | FileCheck %s
# CHECK: PASS losses and weights match numpy
# CHECK: PASS remat keeps the losses
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import recast_reference as ref  # noqa: E402


def reference(w, x, t, steps, lr=0.1):
    losses = []
    for _ in range(steps):
        z = x @ w
        shifted = z - z.max(axis=1, keepdims=True)
        ls = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        losses.append(float(((ls - t) ** 2).mean()))
        g = 2.0 * (ls - t) / ls.size
        softmax = np.exp(ls)
        dz = g - softmax * g.sum(axis=1, keepdims=True)
        w = w - lr * (x.T @ dz)
    return losses, w


def run(options, tag, extra):
    save = os.path.join(options.workdir, tag)
    cmd = [options.recast_run, options.step, "--steps=2", "--report=json",
           f"--save={save}",
           # recast-opt printed the step: its arguments are arg0 (w),
           # arg1 (x), arg2 (t).
           f"--arg=0={options.workdir}/w.npy",
           f"--arg=1={options.workdir}/x.npy",
           f"--arg=2={options.workdir}/t.npy"] + extra
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{result.stderr}")
    report = json.loads(result.stdout)
    losses = report["losses"]
    return losses, ref.load_npy(os.path.join(save, "arg0.npy"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-run", required=True)
    parser.add_argument("--step", required=True)
    parser.add_argument("--workdir", required=True)
    options = parser.parse_args()
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    t = rng.standard_normal((5, 3)).astype(np.float32)
    for name, value in (("w", w), ("x", x), ("t", t)):
        ref.save_npy(os.path.join(options.workdir, f"{name}.npy"), value)

    losses, final = run(options, "plain", [])
    expected_losses, expected_w = reference(w.astype(np.float64),
                                            x.astype(np.float64),
                                            t.astype(np.float64), 2)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-5)
    np.testing.assert_allclose(final, expected_w, rtol=1e-5, atol=1e-6)
    print("PASS losses and weights match numpy")

    remat_losses, _ = run(options, "remat", ["--remat=full"])
    if remat_losses != losses:
        sys.exit(f"FAIL remat: {remat_losses} != {losses}")
    print("PASS remat keeps the losses")


if __name__ == "__main__":
    main()
