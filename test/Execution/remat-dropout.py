"""Dropout under remat: an MLP whose hidden layer goes through
recast.dropout (Philox mask from a seed and a step counter) trains to
bitwise the same losses and parameters with and without --recast-remat: under
policy=full (checkpointed blocks; a byte budget has no room on this MLP, whose
largest single step is within 3% of its peak), under policy=selective, with the dropout marked
recast.remat = "recompute" (its mask is then drawn again for the backward,
which the remat report shows), and with the static memory plan. The mask
changes from step to step, so the steps do not repeat one another.

# RUN: rm -rf %t
# RUN: %python %s --recast-run=recast-run --recast-opt=recast-opt --model=%S/Inputs/mlp-dropout.mlir --workdir=%t | FileCheck %s
# CHECK: PASS the masks differ from step to step
# CHECK: PASS full: bitwise equal
# CHECK: PASS selective: bitwise equal
# CHECK: PASS recompute mark: the dropout is evaluated 2 times
# CHECK: PASS recompute mark: bitwise equal
# CHECK: PASS full with the memory plan: bitwise equal
"""

import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recast_reference as ref  # noqa: E402


def run(options, model, name, extra):
    save = os.path.join(options.workdir, name)
    cmd = [options.recast_run, model, "--steps=3", "--seed=2",
           "--report=json", f"--save={save}"] + extra
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{result.stderr}")
    return save


def same(a, b):
    # Four parameters, the step counter dropout draws from, and the losses.
    return ref.saved_arrays_equal(a, b, count=6)


def check(ok, message):
    print(f"{'PASS' if ok else 'FAIL'} {message}")
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-run", required=True)
    parser.add_argument("--recast-opt", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--workdir", required=True)
    options = parser.parse_args()
    os.makedirs(options.workdir, exist_ok=True)
    ok = True

    base = run(options, options.model, "base", [])
    # The same step with the mask of step 1 at every step (the counter is
    # reset) ends elsewhere: the counter reaches the mask.
    with open(options.model) as f:
        source = f.read()
    frozen = os.path.join(options.workdir, "frozen.mlir")
    with open(frozen, "w") as f:
        f.write(source.replace("%next = arith.addi %s, %one : i64",
                               "%next = arith.muli %s, %one : i64"))
    frozen_run = run(options, frozen, "frozen", [])
    first = np.load(os.path.join(base, "losses.npy"))[0]
    ok &= check(np.load(os.path.join(frozen_run, "losses.npy"))[0] == first and
                not same(base, frozen_run) and
                np.load(os.path.join(base, "step.npy")) == 3,
                "the masks differ from step to step")

    ok &= check(same(base, run(options, options.model, "full", ["--remat=full"])),
                "full: bitwise equal")
    ok &= check(same(base, run(options, options.model, "selective",
                               ["--remat=selective"])),
                "selective: bitwise equal")

    marked = os.path.join(options.workdir, "marked.mlir")
    line = next(i + 1 for i, text in enumerate(source.splitlines())
                if "recast.dropout" in text and "=" in text.split("//")[0])
    with open(marked, "w") as f:
        f.write(source.replace("{rate = 0.25 : f64}",
                               '{rate = 0.25 : f64, recast.remat = "recompute"}'))
    report = subprocess.run(
        [options.recast_opt, marked, "--recast-autodiff", "--canonicalize",
         "--recast-remat=report=-", "-o", os.devnull],
        capture_output=True, text=True, check=True).stdout
    recomputed = json.loads(report)["recomputed"]
    evaluations = [r["evaluations"] for r in recomputed
                   if re.search(rf":{line}:\d+\)", r["loc"])
                   and r["op"] == "linalg.generic"]
    ok &= check(evaluations == [2],
                f"recompute mark: the dropout is evaluated "
                f"{evaluations[0] if evaluations else 0} times")
    ok &= check(same(base, run(options, marked, "marked", [])),
                "recompute mark: bitwise equal")
    ok &= check(same(base, run(options, options.model, "plan",
                               ["--remat=full", "--memory-plan"])),
                "full with the memory plan: bitwise equal")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
