"""Checks recast-run on the MLP example against an independent numpy FP32 reference.

  (a) `--steps=0 --save` writes the initial parameters, and they are
      bit-identical to the documented seed scheme (recast_reference.py);
  (b) training from parameters and a batch given with --arg=NAME=FILE.npy gives
      the same per-step losses and final parameters as numpy;
  (c) the loss decreases over the run;
  (d) the default synthetic run (parameters and batch from --seed) gives the
      same losses and parameters as numpy on the scheme's values.
"""

# RUN: %python %s --recast-run=recast-run --model=%S/../../examples/mlp/train_step.mlir --workdir=%t

import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recast_reference as ref  # noqa: E402

ENTRY = "train_step"

# @train_step's signature in examples/mlp/train_step.mlir, in argument order:
# the position of each argument selects its random stream in the seed scheme.
SIGNATURE = [
    ref.ArgSpec("w1", (784, 256), param=True),
    ref.ArgSpec("b1", (256,), param=True),
    ref.ArgSpec("w2", (256, 10), param=True),
    ref.ArgSpec("b2", (10,), param=True),
    ref.ArgSpec("x", (64, 784)),
    ref.ArgSpec("y", (64, 10), init="onehot"),
]
PARAMS = [spec.name for spec in SIGNATURE if spec.param]
SHAPES = {spec.name: spec.shape for spec in SIGNATURE}

# Tolerances. recast-run and numpy both compute in FP32 with the same order
# of elementwise operations; they differ only in the summation order inside
# matmuls and reductions (loops or vector tiles vs. BLAS). Running the IR
# through upstream mlir-runner against this reference over 20 steps gave a loss
# relative error of at most 2e-6 and parameter errors of at most 1.2e-7
# (parameters are O(0.1)), and FP32 numpy itself is within 1e-7 of a float64
# run. The bounds below leave a 5x to 80x margin for other lowerings while
# still catching any wrong term in the gradient, which moves the loss by far
# more than 1e-5 relative within a few steps.
LOSS_RTOL = 1e-5
PARAM_ATOL = 1e-5

# "Mostly monotone": on a fixed batch full-batch SGD at lr 0.1 decreases the
# loss at every step in the reference; allow one increase per ten steps so the
# check is about training, not about rounding.
MAX_INCREASE_FRACTION = 0.1


class CheckFailure(Exception):
    pass


def run_recast(args, extra, save_dir):
    """Runs recast-run on the model, saving into a fresh `save_dir`."""
    shutil.rmtree(save_dir, ignore_errors=True)
    os.makedirs(save_dir)
    cmd = [args.recast_run, args.model, "--entry=" + ENTRY] + extra + ["--save=" + save_dir]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=args.timeout)
    except FileNotFoundError:
        raise CheckFailure("cannot execute %s" % args.recast_run)
    except subprocess.TimeoutExpired:
        raise CheckFailure("timed out after %ds: %s" % (args.timeout, " ".join(cmd)))
    if proc.returncode != 0:
        raise CheckFailure("exit code %d from: %s\n%s"
                           % (proc.returncode, " ".join(cmd), proc.stdout[-4000:]))
    return proc.stdout


def read_params(save_dir):
    try:
        return {name: ref.load_npy(os.path.join(save_dir, name + ".npy"), SHAPES[name], np.float32)
                for name in PARAMS}
    except (OSError, ValueError) as err:
        raise CheckFailure(str(err))


def read_losses(save_dir, steps):
    try:
        return ref.load_npy(os.path.join(save_dir, "losses.npy"), (steps,), np.float32)
    except (OSError, ValueError) as err:
        raise CheckFailure(str(err))


def compare_losses(got, expected):
    """Per-step relative comparison; returns the largest relative error."""
    if not np.all(np.isfinite(got)):
        raise CheckFailure("non-finite loss from recast-run: %s" % got)
    rel = np.abs(got.astype(np.float64) - expected) / np.abs(expected.astype(np.float64))
    worst = int(np.argmax(rel))
    if rel[worst] > LOSS_RTOL:
        lines = ["step %2d: recast-run %.9g  numpy %.9g  rel.err %.3g"
                 % (i, got[i], expected[i], rel[i]) for i in range(len(got))]
        raise CheckFailure("loss differs from numpy beyond rel. tolerance %g (worst at step %d):\n%s"
                           % (LOSS_RTOL, worst, "\n".join(lines)))
    return float(rel.max())


def compare_params(got, expected):
    """Max absolute error per parameter; fails on any beyond PARAM_ATOL."""
    errors = {}
    for name in PARAMS:
        diff = np.abs(got[name].astype(np.float64) - expected[name])
        if not np.all(np.isfinite(diff)):
            raise CheckFailure("%s: non-finite values from recast-run" % name)
        worst = np.unravel_index(int(np.argmax(diff)), diff.shape)
        if diff[worst] > PARAM_ATOL:
            raise CheckFailure("%s differs from numpy: max abs err %.3g > %g at %s "
                               "(recast-run %.9g, numpy %.9g)"
                               % (name, diff[worst], PARAM_ATOL, worst,
                                  got[name][worst], expected[name][worst]))
        errors[name] = float(diff[worst])
    return errors


def format_errors(errors):
    return ", ".join("%s %.2g" % (name, err) for name, err in errors.items())


def check_initial_params(args):
    """(a) --steps=0 saves the seed scheme's parameters, bit for bit."""
    save_dir = os.path.join(args.workdir, "init")
    run_recast(args, ["--steps=0", "--seed=%d" % args.seed], save_dir)
    saved = read_params(save_dir)
    expected = ref.init_arguments(SIGNATURE, args.seed)
    for index, spec in enumerate(SIGNATURE):
        if not spec.param:
            continue
        count, first = ref.bitwise_mismatches(saved[spec.name], expected[spec.name])
        if count:
            raise CheckFailure(
                "%s (argument %d, init %s, seed %d): %d of %d elements differ from the scheme; "
                "first at %s: recast-run %r, scheme %r"
                % (spec.name, index, spec.init_kind(), args.seed, count, saved[spec.name].size,
                   first, saved[spec.name][first], expected[spec.name][first]))
    return "(a) initial parameters are bit-identical to the seed scheme (seed %d): %s" % (
        args.seed, ", ".join("%s=%s" % (s.name, s.init_kind()) for s in SIGNATURE if s.param))


def make_given_inputs(seed):
    """Parameters and a batch unlike the scheme's, so --arg must really be used."""
    rng = np.random.default_rng(seed)
    values = {
        "w1": rng.normal(0.0, 0.02, SHAPES["w1"]),
        "b1": rng.normal(0.0, 0.01, SHAPES["b1"]),
        "w2": rng.normal(0.0, 0.05, SHAPES["w2"]),
        "b2": rng.normal(0.0, 0.01, SHAPES["b2"]),
        "x": rng.uniform(0.0, 1.0, SHAPES["x"]),
    }
    batch, classes = SHAPES["y"]
    values["y"] = np.eye(classes)[rng.integers(0, classes, batch)]
    return {name: value.astype(np.float32) for name, value in values.items()}


def check_given_inputs(args):
    """(b) --arg for every argument; losses and final parameters match numpy."""
    inputs = make_given_inputs(args.seed)
    input_dir = os.path.join(args.workdir, "inputs")
    arg_flags = ["--arg=%s=%s" % (name, ref.save_npy(os.path.join(input_dir, name + ".npy"), value))
                 for name, value in inputs.items()]
    save_dir = os.path.join(args.workdir, "given")
    # A seed different from (a) as well: nothing may come from the scheme.
    run_recast(args, ["--steps=%d" % args.steps, "--seed=%d" % (args.seed + 1)] + arg_flags, save_dir)
    losses = read_losses(save_dir, args.steps)
    expected_losses, expected_params = ref.mlp_train(inputs, inputs["x"], inputs["y"], args.steps)
    loss_err = compare_losses(losses, expected_losses)
    param_errs = compare_params(read_params(save_dir), expected_params)
    return losses, ("(b) --arg inputs, %d steps: losses match numpy (max rel.err %.2g), "
                    "parameters match (max abs.err %s)"
                    % (args.steps, loss_err, format_errors(param_errs)))


def check_synthetic(args):
    """(d) the default run (everything from --seed) matches numpy on the scheme's values."""
    save_dir = os.path.join(args.workdir, "synthetic")
    run_recast(args, ["--steps=%d" % args.steps, "--seed=%d" % args.seed], save_dir)
    losses = read_losses(save_dir, args.steps)
    values = ref.init_arguments(SIGNATURE, args.seed)
    expected_losses, expected_params = ref.mlp_train(values, values["x"], values["y"], args.steps)
    loss_err = compare_losses(losses, expected_losses)
    param_errs = compare_params(read_params(save_dir), expected_params)
    return losses, ("(d) synthetic run, seed %d, %d steps: losses match numpy on the scheme's "
                    "values (max rel.err %.2g), parameters match (max abs.err %s)"
                    % (args.seed, args.steps, loss_err, format_errors(param_errs)))


def check_loss_decreases(label, losses):
    """(c) last < first and few increases along the way."""
    if len(losses) < 2:
        raise CheckFailure("%s: need at least 2 steps to see the loss decrease" % label)
    increases = int(np.count_nonzero(np.diff(losses) > 0))
    allowed = int(MAX_INCREASE_FRACTION * (len(losses) - 1))
    if not losses[-1] < losses[0] or increases > allowed:
        raise CheckFailure("%s: loss does not decrease (first %.6g, last %.6g, %d increases, "
                           "%d allowed): %s" % (label, losses[0], losses[-1], increases, allowed,
                                                losses))
    return "(c) %s: loss decreases %.6g -> %.6g (%d of %d steps up)" % (
        label, losses[0], losses[-1], increases, len(losses) - 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recast-run", required=True, help="recast-run executable")
    parser.add_argument("--model", required=True, help="examples/mlp/train_step.mlir")
    parser.add_argument("--workdir", required=True, help="scratch directory (created)")
    parser.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
    parser.add_argument("--seed", type=int, default=7, help="run seed (default 7)")
    parser.add_argument("--timeout", type=int, default=600, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    args.workdir = os.path.abspath(args.workdir)
    os.makedirs(args.workdir, exist_ok=True)

    failures = 0

    def attempt(name, check, *check_args):
        nonlocal failures
        try:
            result = check(*check_args)
        except CheckFailure as err:
            print("FAIL %s: %s" % (name, err))
            failures += 1
            return None
        losses, message = result if isinstance(result, tuple) else (None, result)
        print("PASS " + message)
        return losses

    attempt("(a) initial parameters", check_initial_params, args)
    given_losses = attempt("(b) --arg inputs", check_given_inputs, args)
    synthetic_losses = attempt("(d) synthetic run", check_synthetic, args)
    for label, losses in (("--arg run", given_losses), ("synthetic run", synthetic_losses)):
        if losses is not None:
            attempt("(c) " + label, check_loss_decreases, label, losses)

    sys.stdout.flush()
    if failures:
        print("%d check(s) failed" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
