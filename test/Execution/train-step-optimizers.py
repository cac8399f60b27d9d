"""--recast-train-step's optimizers against PyTorch's update rules written in
numpy: SGD (with weight decay), SGD with momentum, and AdamW (bias-corrected,
decoupled weight decay), five steps on a linear regression, in FP32.

# RUN: %python %s --recast-opt=recast-opt --recast-run=recast-run --loss=%S/Inputs/linear-regression.mlir --workdir=%t
"""

import argparse
import os
import subprocess
import sys

import numpy as np

STEPS = 5
CONFIGS = {
    "sgd": "optimizer=sgd lr=0.1 weight-decay=0.01",
    "momentum": "optimizer=momentum lr=0.05 momentum=0.9 weight-decay=0.01",
    "adamw": "optimizer=adamw lr=0.01 beta1=0.9 beta2=0.999 eps=1e-8 weight-decay=0.1",
}


def loss_and_grads(w, b, x, y):
    r = x @ w + b - y
    n = r.size
    return (r * r).sum() / n, 2 * x.T @ r / n, 2 * r.sum(0) / n


def reference(name, w, b, x, y):
    params = [w.astype(np.float64), b.astype(np.float64)]
    state = [np.zeros_like(p) for p in params] * 2
    losses = []
    for t in range(1, STEPS + 1):
        loss, *grads = loss_and_grads(*params, x, y)
        losses.append(loss)
        for k, (p, g) in enumerate(zip(params, grads)):
            if name == "sgd":
                params[k] = p - 0.1 * (g + 0.01 * p)
            elif name == "momentum":
                state[k] = 0.9 * state[k] + (g + 0.01 * p)
                params[k] = p - 0.05 * state[k]
            else:
                m = state[k] = 0.9 * state[k] + 0.1 * g
                v = state[2 + k] = 0.999 * state[2 + k] + 0.001 * g * g
                p = p * (1 - 0.01 * 0.1)
                params[k] = p - 0.01 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return np.array(losses), params


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--recast-opt", "--recast-run", "--loss", "--workdir"):
        parser.add_argument(flag, required=True)
    options = parser.parse_args()
    os.makedirs(options.workdir, exist_ok=True)
    rng = np.random.default_rng(0)
    inputs = {"w": rng.standard_normal((4, 2)), "b": rng.standard_normal(2),
              "x": rng.standard_normal((8, 4)), "y": rng.standard_normal((8, 2))}
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    args = []
    for name, value in inputs.items():
        path = os.path.join(options.workdir, name + ".npy")
        np.save(path, value)
        args.append(f"--arg={name}={path}")
    failed = False
    for name, config in CONFIGS.items():
        step = os.path.join(options.workdir, name + ".mlir")
        subprocess.run([options.recast_opt, options.loss,
                        f"--recast-train-step={config}", "-o", step], check=True)
        save = os.path.join(options.workdir, name)
        # Arguments of the step are named arg<i>; pass by position instead.
        positional = [f"--arg=0={options.workdir}/w.npy", f"--arg=1={options.workdir}/b.npy"]
        batch_start = {"sgd": 2, "momentum": 4, "adamw": 7}[name]
        positional += [f"--arg={batch_start}={options.workdir}/x.npy",
                       f"--arg={batch_start + 1}={options.workdir}/y.npy"]
        subprocess.run([options.recast_run, step, f"--steps={STEPS}", f"--save={save}"]
                       + positional, check=True, capture_output=True)
        losses = np.load(os.path.join(save, "losses.npy"))
        w = np.load(os.path.join(save, "arg0.npy"))
        b = np.load(os.path.join(save, "arg1.npy"))
        ref_losses, (ref_w, ref_b) = reference(name, *[inputs[k] for k in "wbxy"])
        loss_err = np.max(np.abs(losses - ref_losses) / np.abs(ref_losses))
        param_err = max(np.max(np.abs(w - ref_w)), np.max(np.abs(b - ref_b)))
        ok = loss_err < 1e-5 and param_err < 1e-5
        failed |= not ok
        print(f"{'PASS' if ok else 'FAIL'} {name}: loss rel. error {loss_err:.1e}, "
              f"parameter abs. error {param_err:.1e} over {STEPS} steps")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
