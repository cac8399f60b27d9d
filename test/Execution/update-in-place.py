"""recast-run applies each parameter update as soon as its gradient is final,
into the parameter's buffer (recast-update-in-place, on by default): the
losses and final parameters are bitwise those of the step with the updates
at its end (--update-in-place=false), and the measured peak is lower by the
gradients the step no longer holds (the MLP's peak is at its updates) and
never higher. Under a remat budget the updates move after the schedule is
applied (a recomputed reader of a parameter comes first), so the step still
fits the budget.

# RUN: rm -rf %t
# RUN: %python %s --recast-run=recast-run --workdir=%t \
# RUN:   --case=mlp:%examples/mlp/train_step.mlir::0.85 \
# RUN:   --case=mlp-bf16:%examples/mlp/train_step.mlir:bf16:0.8 \
# RUN:   --case=gpt-tiny:%examples/models/gpt-tiny.mlir::1.0 \
# RUN:   --case=gpt-tiny-remat:%examples/models/gpt-tiny.mlir::1.0:0.8 | FileCheck %s
# CHECK: PASS mlp
# CHECK: PASS mlp-bf16
# CHECK: PASS gpt-tiny
# CHECK: PASS gpt-tiny-remat
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recast_reference as ref  # noqa: E402


def run(options, name, model, precision, in_place, remat=None):
    save = os.path.join(options.workdir, f"{name}-{in_place}-{remat}")
    cmd = [options.recast_run, model, "--steps=3", "--seed=1",
           "--report=json", f"--save={save}",
           f"--update-in-place={'true' if in_place else 'false'}"]
    if precision:
        cmd.append(f"--mixed-precision={precision}")
    if remat:
        cmd.append(f"--remat={remat}")
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{result.stderr}")
    report = json.loads(result.stdout)
    report["save"] = save
    return report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-run", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--case", action="append", default=[],
                        help="name:model:precision:largest measured ratio"
                        "[:remat budget ratio]")
    options = parser.parse_args()
    os.makedirs(options.workdir, exist_ok=True)
    failed = False
    for case in options.case:
        name, model, precision, largest, *remat = case.split(":")
        at_end = run(options, name, model, precision, False)
        in_place = run(options, name, model, precision, True, *remat)
        bitwise = ref.saved_arrays_equal(at_end["save"], in_place["save"])
        ratio = (in_place["measured_peak_bytes"] /
                 at_end["measured_peak_bytes"])
        ok = bitwise and ratio <= float(largest)
        if remat:
            budget = float(remat[0]) * at_end["static_peak_bytes"]
            fits = in_place["static_peak_bytes"] <= budget
            print(f"  remat {remat[0]}: static peak "
                  f"{in_place['static_peak_bytes']} <= {int(budget)}: {fits}")
            ok = ok and fits
        print(f"{'PASS' if ok else 'FAIL'} {name}: bitwise {bitwise}; "
              f"measured peak {in_place['measured_peak_bytes']} in place, "
              f"{at_end['measured_peak_bytes']} at the end ({ratio:.3f}, "
              f"at most {largest}); static {in_place['static_peak_bytes']} "
              f"vs {at_end['static_peak_bytes']}")
        failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
