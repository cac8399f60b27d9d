"""Checks recast on the zoo's tiny GPT against an independent numpy implementation.

The model file (examples/models/gpt-tiny.mlir) holds @loss, the forward, and
@train_step, which differentiates it with recast.value_and_grad and applies
SGD. gpt_reference.py computes the same forward and a hand-written backward in
numpy (float64), so:

  (f) forward: @loss alone (a copy of the file without @train_step, run with
      --entry=loss) on given parameters and tokens gives numpy's loss;
  (a) `--steps=0 --save` writes the initial parameters bit-identical to the
      seed scheme (layer-norm gains "ones", fan_in weights, zero biases);
  (b) one step from given parameters and tokens (--arg): the loss and every
      updated parameter p - lr * g match numpy, and so does the gradient the
      update implies, (p - p_new) / lr;
  (c) the default synthetic run over --steps steps: per-step losses match
      numpy and the loss decreases.

The model's shapes, heads and learning rate are read from the file, and its
signature is checked against the reference's before anything runs.
"""

# RUN: %python %s --recast-run=recast-run --model=%S/../../examples/models/gpt-tiny.mlir --workdir=%t

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections import OrderedDict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt_reference as gpt  # noqa: E402
import recast_reference as ref  # noqa: E402

# Tolerances. recast-run computes in FP32, the reference in float64. A float32
# run of the same numpy reference (the arithmetic the IR does, up to the
# summation order of matmuls and reductions) differs from float64 by 3e-8
# relative in the loss, 6e-8 absolute in the updated parameters and 7e-7 in
# the gradients' relative norm; over 20 steps the loss drifts by up to 4e-5
# relative (float32 vs float64 on the scheme's values). The bounds leave
# 30x or more of margin; a wrong gradient term changes the update by ~1e-3
# and the implied gradient by more than 1e-2 of its norm.
LOSS_RTOL = 1e-5
TRAJECTORY_RTOL = 1e-3
PARAM_ATOL = 1e-5
GRAD_RTOL = 1e-3

# On a fixed batch the reference decreases the loss at every one of 20 steps
# at the zoo's learning rate for seeds 0-5; allow one increase per ten steps.
MAX_INCREASE_FRACTION = 0.1


class CheckFailure(Exception):
    pass


# ----------------------------------------------------------------------------
# Reading the model file
# ----------------------------------------------------------------------------

class ModelFile:
    """The parts of the generated file the checks need."""

    def __init__(self, path):
        try:
            with open(path) as f:
                self.text = f.read()
        except OSError as err:
            raise CheckFailure("cannot read the model: %s" % err)
        self.path = path
        sig = re.search(r"func\.func @train_step\((.*?)\)\s*->", self.text, re.S)
        if not sig:
            raise CheckFailure("%s has no @train_step" % path)
        self.signature = []
        for m in re.finditer(r"%(\w+): tensor<((?:\d+x)*)(\w+)>(?: \{([^}]*)\})?", sig.group(1)):
            shape = tuple(int(d) for d in m.group(2).split("x") if d)
            attrs = m.group(4) or ""
            init = re.search(r'recast\.init = "([^"]*)"', attrs)
            dtype = {"f32": np.float32, "i32": np.int32, "i64": np.int64}[m.group(3)]
            self.signature.append(ref.ArgSpec(m.group(1), shape, dtype, "recast.param" in attrs,
                                              init.group(1) if init else None))
        lr = re.search(r"// SGD: p_new = p - (\S+) \* grad\.", self.text)
        if not lr:
            raise CheckFailure("%s: no '// SGD: p_new = p - <lr> * grad.' line" % path)
        self.lr = float(lr.group(1))
        specs = {s.name: s for s in self.signature}
        vocab, d_model = specs["wte"].shape
        batch, seq_plus_one = specs["tokens"].shape
        bmm = re.search(r"linalg\.batch_matmul ins\(\S+, \S+ : tensor<(\d+)x", self.text)
        self.config = dict(batch=batch, seq=seq_plus_one - 1, vocab=vocab, d_model=d_model,
                           layers=sum(1 for s in self.signature if s.name.endswith("_attn_qkv_w")),
                           heads=int(bmm.group(1)) // batch if bmm else 0)

    def check_signature(self):
        """The signature must be the reference's: names, order, shapes, initializers."""
        shapes = gpt.param_shapes(**self.config)
        kinds = gpt.init_kinds(shapes)
        expected = [(name, shape, True, kinds[name]) for name, shape in shapes.items()]
        expected.append(("tokens", (self.config["batch"], self.config["seq"] + 1), False,
                         "index:%d" % self.config["vocab"]))
        got = [(s.name, s.shape, s.param, s.init) for s in self.signature]
        if got != expected:
            for i, (g, e) in enumerate(zip(got + [None] * len(expected), expected + [None] * len(got))):
                if g != e:
                    raise CheckFailure("@train_step argument %d is %s, the reference expects %s"
                                       % (i, g, e))
        if not self.config["heads"] or self.config["d_model"] % self.config["heads"]:
            raise CheckFailure("cannot infer the number of heads from %s" % self.path)

    def loss_only(self, path):
        """A copy without @train_step, with @loss public, for --entry=loss."""
        lines = self.text.split("\n")
        start = next(i for i, l in enumerate(lines) if l.startswith("  func.func @train_step("))
        end = next(i for i in range(start, len(lines)) if lines[i] == "  }")
        text = "\n".join(lines[:start] + lines[end + 1:])
        text = text.replace("func.func private @loss(", "func.func @loss(")
        with open(path, "w") as f:
            f.write(text)
        return path


# ----------------------------------------------------------------------------
# Running recast-run and comparing
# ----------------------------------------------------------------------------

def run_recast(args, model, entry, extra, save_dir):
    shutil.rmtree(save_dir, ignore_errors=True)
    os.makedirs(save_dir)
    cmd = [args.recast_run, model, "--entry=" + entry] + extra + ["--save=" + save_dir]
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


def read_losses(save_dir, steps):
    try:
        return ref.load_npy(os.path.join(save_dir, "losses.npy"), (steps,), np.float32)
    except (OSError, ValueError) as err:
        raise CheckFailure(str(err))


def read_params(save_dir, shapes):
    try:
        return OrderedDict((n, ref.load_npy(os.path.join(save_dir, n + ".npy"), s, np.float32))
                           for n, s in shapes.items())
    except (OSError, ValueError) as err:
        raise CheckFailure(str(err))


def arg_flags(values, directory):
    return ["--arg=%s=%s" % (name, ref.save_npy(os.path.join(directory, name + ".npy"), value,
                                                value.dtype))
            for name, value in values.items()]


def given_inputs(model, seed):
    """Parameters and tokens unlike the seed scheme's, so --arg must really be used."""
    rng = np.random.default_rng(seed)
    shapes = gpt.param_shapes(**model.config)
    params = gpt.random_params(shapes, rng, np.float32, scale=0.05)
    c = model.config
    tokens = rng.integers(0, c["vocab"], (c["batch"], c["seq"] + 1)).astype(np.int32)
    return params, tokens


def as64(params):
    return OrderedDict((n, v.astype(np.float64)) for n, v in params.items())


def compare_loss(got, expected, rtol, what):
    if not np.isfinite(got):
        raise CheckFailure("%s: non-finite loss %r from recast-run" % (what, got))
    rel = abs(float(got) - float(expected)) / abs(float(expected))
    if rel > rtol:
        raise CheckFailure("%s: recast-run %.9g, numpy %.9g, rel.err %.3g > %g"
                           % (what, got, expected, rel, rtol))
    return rel


def check_forward(args, model):
    """(f) @loss alone matches the numpy forward."""
    params, tokens = given_inputs(model, args.seed)
    inputs = OrderedDict(params)
    inputs["tokens"] = tokens
    workdir = os.path.join(args.workdir, "forward")
    os.makedirs(workdir, exist_ok=True)
    loss_model = model.loss_only(os.path.join(workdir, "loss-only.mlir"))
    save_dir = os.path.join(workdir, "out")
    run_recast(args, loss_model, "loss", ["--steps=1"] + arg_flags(inputs, workdir), save_dir)
    got = read_losses(save_dir, 1)[0]
    expected = gpt.forward(as64(params), tokens, model.config["heads"])
    rel = compare_loss(got, expected, LOSS_RTOL, "forward loss")
    return "(f) forward (@loss alone, --arg inputs): loss %.6f matches numpy %.6f (rel.err %.2g)" % (
        got, expected, rel)


def check_initial_params(args, model):
    """(a) --steps=0 writes the seed scheme's initial parameters, bit for bit."""
    save_dir = os.path.join(args.workdir, "init")
    run_recast(args, model.path, "train_step", ["--steps=0", "--seed=%d" % args.seed], save_dir)
    shapes = gpt.param_shapes(**model.config)
    saved = read_params(save_dir, shapes)
    expected = ref.init_arguments(model.signature, args.seed)
    for index, spec in enumerate(model.signature):
        if not spec.param:
            continue
        count, first = ref.bitwise_mismatches(saved[spec.name], expected[spec.name])
        if count:
            raise CheckFailure("%s (argument %d, init %s): %d of %d elements differ from the "
                               "scheme; first at %s" % (spec.name, index, spec.init_kind(), count,
                                                        saved[spec.name].size, first))
    return "(a) initial parameters are bit-identical to the seed scheme (seed %d)" % args.seed


def compare_step(saved, before, expected_new, expected_grads, lr):
    """Updated parameters within PARAM_ATOL, and the implied gradients within
    GRAD_RTOL of the gradient's norm (plus the float32 rounding of p_new)."""
    worst_param, worst_grad = 0.0, 0.0
    for name, new in saved.items():
        diff = np.abs(new.astype(np.float64) - expected_new[name])
        if not np.all(np.isfinite(diff)):
            raise CheckFailure("%s: non-finite values from recast-run" % name)
        at = np.unravel_index(int(np.argmax(diff)), diff.shape)
        if diff[at] > PARAM_ATOL:
            raise CheckFailure("updated %s differs from numpy: max abs.err %.3g > %g at %s "
                               "(recast-run %.9g, numpy %.9g)" % (name, diff[at], PARAM_ATOL, at,
                                                                  new[at], expected_new[name][at]))
        worst_param = max(worst_param, float(diff[at]))
        implied = (before[name].astype(np.float64) - new.astype(np.float64)) / lr
        grad = expected_grads[name]
        # p_new is rounded to float32: half an ulp of |p| per element, over lr.
        rounding = np.sqrt(new.size) * np.spacing(np.float32(np.abs(before[name]).max() + 1e-30)) / lr
        err = np.linalg.norm(implied - grad)
        bound = GRAD_RTOL * np.linalg.norm(grad) + rounding
        if err > bound:
            raise CheckFailure("gradient of %s implied by the update is off: |g_recast - g_numpy| "
                               "%.3g > %.3g (|g_numpy| %.3g)" % (name, err, bound, np.linalg.norm(grad)))
        worst_grad = max(worst_grad, float(err / max(np.linalg.norm(grad), 1e-30)))
    return worst_param, worst_grad


def check_one_step(args, model):
    """(b) one step from --arg inputs: loss, updated parameters, implied gradients."""
    params, tokens = given_inputs(model, args.seed + 1)
    inputs = OrderedDict(params)
    inputs["tokens"] = tokens
    workdir = os.path.join(args.workdir, "step")
    os.makedirs(workdir, exist_ok=True)
    save_dir = os.path.join(workdir, "out")
    run_recast(args, model.path, "train_step",
               ["--steps=1", "--seed=%d" % (args.seed + 2)] + arg_flags(inputs, workdir), save_dir)
    loss, new, grads = gpt.sgd_step(as64(params), tokens, model.config["heads"], model.lr)
    rel = compare_loss(read_losses(save_dir, 1)[0], loss, LOSS_RTOL, "step loss")
    saved = read_params(save_dir, gpt.param_shapes(**model.config))
    worst_param, worst_grad = compare_step(saved, params, new, grads, model.lr)
    return ("(b) one step from --arg inputs: loss rel.err %.2g, updated parameters max abs.err "
            "%.2g, implied gradients max rel.err %.2g over %d tensors"
            % (rel, worst_param, worst_grad, len(saved)))


def check_synthetic(args, model):
    """(c) the default run: per-step losses match numpy and decrease."""
    save_dir = os.path.join(args.workdir, "synthetic")
    run_recast(args, model.path, "train_step", ["--steps=%d" % args.steps, "--seed=%d" % args.seed],
               save_dir)
    losses = read_losses(save_dir, args.steps)
    values = ref.init_arguments(model.signature, args.seed)
    tokens = values.pop("tokens")
    params = as64(values)
    expected = []
    for _ in range(args.steps):
        loss, params, _ = gpt.sgd_step(params, tokens, model.config["heads"], model.lr)
        expected.append(loss)
    worst = max(compare_loss(g, e, TRAJECTORY_RTOL, "synthetic step %d" % i)
                for i, (g, e) in enumerate(zip(losses, expected)))
    increases = int(np.count_nonzero(np.diff(losses) > 0))
    allowed = int(MAX_INCREASE_FRACTION * (len(losses) - 1))
    if len(losses) > 1 and (not losses[-1] < losses[0] or increases > allowed):
        raise CheckFailure("loss does not decrease (first %.6g, last %.6g, %d increases, %d "
                           "allowed): %s" % (losses[0], losses[-1], increases, allowed, losses))
    return ("(c) synthetic run, seed %d, %d steps: losses match numpy (max rel.err %.2g) and "
            "decrease %.6f -> %.6f (%d steps up)"
            % (args.seed, args.steps, worst, losses[0], losses[-1], increases))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recast-run", required=True, help="recast-run executable")
    parser.add_argument("--model", required=True, help="examples/models/gpt-tiny.mlir")
    parser.add_argument("--workdir", required=True, help="scratch directory (created)")
    parser.add_argument("--steps", type=int, default=20, help="steps of the synthetic run (default 20)")
    parser.add_argument("--seed", type=int, default=7, help="run seed (default 7)")
    parser.add_argument("--timeout", type=int, default=900, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    args.workdir = os.path.abspath(args.workdir)
    os.makedirs(args.workdir, exist_ok=True)

    try:
        model = ModelFile(args.model)
        model.check_signature()
    except CheckFailure as err:
        print("FAIL model file: %s" % err)
        return 1
    print("model %s: %s, lr %g" % (os.path.basename(args.model),
                                   ", ".join("%s %d" % kv for kv in model.config.items()), model.lr))

    failures = 0
    for name, check in (("(f) forward", check_forward), ("(a) initial parameters", check_initial_params),
                        ("(b) one step", check_one_step), ("(c) synthetic run", check_synthetic)):
        try:
            print("PASS " + check(args, model))
        except CheckFailure as err:
            print("FAIL %s: %s" % (name, err))
            failures += 1
        sys.stdout.flush()
    if failures:
        print("%d check(s) failed" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
