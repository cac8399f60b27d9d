"""Rematerialization changes when values are computed, never what: the
training step after --recast-remat gives bitwise the same losses and
parameters, and the measured peak falls with the budget and stays within
it; the static peak of the rewritten step is what the step measures
(U-Net: its concatenations' gradients are copies of slices of dy).

# RUN: rm -rf %t
# RUN: %python %s --recast-run=recast-run --model=%examples/models/gpt-tiny.mlir --workdir=%t/gpt
# RUN: %python %s --recast-run=recast-run --model=%examples/models/unet-small.mlir --workdir=%t/unet --budgets=0.7,0.6
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

# What the measured peak may add to the static one: each buffer rounded up
# to 64 bytes.
ROUNDING_ALLOWANCE = 2048


def run(options, budget, save):
    cmd = [options.recast_run, options.model, "--entry=train_step", "--steps=3",
           "--seed=3", "--report=json", f"--save={save}"]
    if budget:
        cmd.append(f"--remat={budget}")
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{result.stderr}")
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-run", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--budgets", default="0.9,0.75,0.6")
    options = parser.parse_args()
    os.makedirs(options.workdir, exist_ok=True)
    base_dir = os.path.join(options.workdir, "base")
    base = run(options, None, base_dir)
    files = sorted(f for f in os.listdir(base_dir) if f.endswith(".npy"))
    failed = False
    for budget in options.budgets.split(","):
        out_dir = os.path.join(options.workdir, budget)
        report = run(options, budget, out_dir)
        same = all(np.array_equal(np.load(os.path.join(base_dir, f)),
                                  np.load(os.path.join(out_dir, f))) for f in files)
        target = float(budget) * base["static_peak_bytes"]
        measured = report["measured_peak_bytes"]
        static = report["static_peak_bytes"]
        # The ratio is of the peak of the step remat sees, which the
        # pipeline's last canonicalization lowers by up to 1.4% (gpt-tiny).
        within = measured <= 1.02 * target + ROUNDING_ALLOWANCE
        exact = 0 <= measured - static <= ROUNDING_ALLOWANCE
        lower = measured < base["measured_peak_bytes"]
        ok = same and within and exact and lower
        failed |= not ok
        print(f"{'PASS' if ok else 'FAIL'} budget {budget}: bitwise equal "
              f"{same}; measured peak {measured} (static {static}) vs "
              f"{base['measured_peak_bytes']} without remat, budget "
              f"{int(target)} bytes")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
