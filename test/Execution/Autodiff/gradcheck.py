"""Finite-difference check of recast's reverse-mode gradients.

For every `@grad_<case>` function of an .mlir file (a training step whose
{recast.param} arguments are the differentiated ones and whose results are
`recast.value_and_grad`'s loss and gradients), runs it once with recast-run on
random FP64 inputs and saves the gradients, then compares their dot product
with random directions v against central differences of the loss:

    (L(p + eps v) - L(p - eps v)) / (2 eps)  ~=  sum_p <dL/dp, v_p>

with eps = 1e-6 in FP64: the truncation error is O(eps^2) and the rounding
error O(1e-16 / eps), so a relative tolerance of 1e-6 separates a correct rule
from a wrong one by many orders of magnitude. Each case is also required to
produce a non-zero gradient, so that a pass that drops the backward fails.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zlib

import numpy as np

EPS = 1e-6
RTOL = 1e-6
DIRECTIONS = 3

ENTRY_RE = re.compile(r"func\.func @(grad_\w+)\((.*?)\)\s*->", re.S)
ARG_RE = re.compile(r"%(\w+)\s*:\s*tensor<([^>]*)>(\s*\{[^}]*\})?")


def parse_entries(text):
    entries = []
    for match in ENTRY_RE.finditer(text):
        args = []
        for arg in ARG_RE.finditer(match.group(2)):
            dims = arg.group(2).split("x")
            if dims[-1] != "f64":
                raise SystemExit(f"{match.group(1)}: gradcheck cases use f64 tensors")
            shape = tuple(int(d) for d in dims[:-1])
            args.append((arg.group(1), shape, "recast.param" in (arg.group(3) or "")))
        entries.append((match.group(1), args))
    return entries


def run(recast_run, model, entry, values, workdir, save=None):
    cmd = [recast_run, model, f"--entry={entry}", "--steps=1", "--report=json"]
    for name, value in values.items():
        path = os.path.join(workdir, f"{name}.npy")
        np.save(path, value)
        cmd.append(f"--arg={name}={path}")
    if save:
        cmd.append(f"--save={save}")
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return json.loads(result.stdout)["losses"][0]


def check(recast_run, model, entry, args, workdir):
    rng = np.random.default_rng(zlib.crc32(entry.encode()))
    values = {name: rng.uniform(-1.0, 1.0, shape) for name, shape, _ in args}
    params = [name for name, _, is_param in args if is_param]
    save = os.path.join(workdir, "grads")
    run(recast_run, model, entry, values, workdir, save)
    grads = {name: np.load(os.path.join(save, f"{name}.npy")) for name in params}
    if all(not np.any(g) for g in grads.values()):
        return f"FAIL {entry}: every gradient is zero"
    worst = 0.0
    for _ in range(DIRECTIONS):
        direction = {name: rng.standard_normal(values[name].shape) for name in params}
        plus = dict(values)
        minus = dict(values)
        for name in params:
            plus[name] = values[name] + EPS * direction[name]
            minus[name] = values[name] - EPS * direction[name]
        fd = (run(recast_run, model, entry, plus, workdir)
              - run(recast_run, model, entry, minus, workdir)) / (2 * EPS)
        ad = sum(float(np.sum(grads[n] * direction[n])) for n in params)
        rel = abs(fd - ad) / max(1.0, abs(fd), abs(ad))
        worst = max(worst, rel)
        if rel > RTOL:
            return (f"FAIL {entry}: directional derivative {ad!r} from recast, "
                    f"{fd!r} by central differences (rel. error {rel:.2e})")
    return f"PASS {entry}: max rel. error {worst:.1e} over {DIRECTIONS} directions"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model")
    parser.add_argument("--recast-run", required=True)
    options = parser.parse_args()
    with open(options.model) as f:
        entries = parse_entries(f.read())
    if not entries:
        raise SystemExit(f"{options.model}: no @grad_* functions")
    failed = False
    with tempfile.TemporaryDirectory() as workdir:
        for entry, args in entries:
            try:
                line = check(options.recast_run, options.model, entry, args, workdir)
            except RuntimeError as error:
                line = f"FAIL {entry}: recast-run failed:\n{error}"
            print(line)
            failed |= line.startswith("FAIL")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
