"""recast-run --memory-plan: the step allocates its arena once (the first
block it asks the tracking allocator for is the planned arena, at every
step), the results are bitwise those of the run without the plan, with and
without remat, and the measured peak stays within the remat budget plus the
documented allowance (docs/Remat.md): 5% (64-byte rounding, buffers
bufferization does not reuse in place, fragmentation) and the returned
buffers, which live outside the arena while it is held: the loss only, since
the updated parameters come back in their argument buffers.

# RUN: rm -rf %t
# RUN: %python %s --recast-run=recast-run --workdir=%t \
# RUN:   --case=mlp:%examples/mlp/train_step.mlir:full \
# RUN:   --case=gpt-tiny:%examples/models/gpt-tiny.mlir:0.85 | FileCheck %s
# CHECK: PASS mlp plan
# CHECK: PASS mlp full
# CHECK: PASS mlp full+plan
# CHECK: PASS gpt-tiny plan
# CHECK: PASS gpt-tiny 0.85
# CHECK: PASS gpt-tiny 0.85+plan
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recast_reference as ref  # noqa: E402


def run(options, name, model, remat, plan):
    save = os.path.join(options.workdir, f"{name}-{remat}-{plan}")
    cmd = [options.recast_run, model, "--steps=3", "--seed=1",
           "--report=json", f"--save={save}"]
    if remat:
        cmd.append(f"--remat={remat}")
    if plan:
        cmd.append("--memory-plan")
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
                        help="name:model:remat")
    options = parser.parse_args()
    os.makedirs(options.workdir, exist_ok=True)
    failed = False
    for case in options.case:
        name, model, remat = case.split(":")
        base = run(options, name, model, None, False)
        for config, plan in ((None, True), (remat, False), (remat, True)):
            report = run(options, name, model, config, plan)
            ok = ref.saved_arrays_equal(base["save"], report["save"])
            notes = [f"bitwise {ok}"]
            if plan:
                p = report["memory_plan"]
                once = (p["arena_bytes"] == p["planned_arena_bytes"] > 0 and
                        p["allocations_per_step"] <= 1 + p["unplanned_buffers"])
                tight = p["fragmentation"] < 0.05
                ok = ok and once and tight
                notes.append(f"arena {p['arena_bytes']} (planned "
                             f"{p['planned_arena_bytes']}), liveness peak "
                             f"{p['liveness_peak_bytes']}, "
                             f"{p['allocations_per_step']} allocations per step")
            try:
                budget = float(config) * base["static_peak_bytes"]
            except (TypeError, ValueError):
                budget = None
            if budget:
                allowance = 1.05 * budget + (
                    report["memory_plan"]["returned_bytes"] if plan else 0)
                within = report["measured_peak_bytes"] <= allowance
                ok = ok and within
                notes.append(f"measured peak {report['measured_peak_bytes']} "
                             f"<= {int(allowance)}: {within}")
            label = (config or "") + ("+plan" if plan and config else
                                      "plan" if plan else "")
            print(f"{'PASS' if ok else 'FAIL'} {name} {label}: "
                  + "; ".join(notes))
            failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
