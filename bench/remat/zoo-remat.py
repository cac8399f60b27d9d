#!/usr/bin/env python3
"""Rematerialization on the executed zoo: for each small model, runs its
training step with recast-run without remat, at budget ratios of its peak,
and under policy=full and policy=selective; compares the losses and final
parameters bitwise with the run without remat, and tabulates the static
peak (the memory report of the rewritten step), the peak measured by
recast-run's tracking allocator, and the budget.

Usage (from the repository root, after building recast-run):
  bench/remat/zoo-remat.py --recast-run=build/bin/recast-run \\
      --models=examples/models [--steps=2] [--only=gpt-tiny,...]
      [--configs=0.9,full,...] [--memory-plan] [--out=zoo-remat.json]
  bench/remat/zoo-remat.py --render zoo-remat.json [more.json ...]

With --memory-plan every run places the step's buffers in one arena
(recast-run --memory-plan); the table adds the arena each step allocated,
the liveness peak and the fragmentation, and "bitwise" compares with the run
without remat and without the plan.
"""

import argparse
import json
import re
import os
import subprocess
import sys
import tempfile
import time

MODELS = ["mlp-small", "gpt-tiny", "resnet18-small", "vgg16-small",
          "mobilenetv2-small", "unet-small"]
CONFIGS = ["none", "0.9", "0.8", "0.7", "0.6", "0.5", "full", "selective"]


def run(options, model, config, workdir, memory_plan=None):
    if memory_plan is None:
        memory_plan = options.memory_plan
    save = os.path.join(workdir, f"{model}-{config}" +
                        ("-plan" if memory_plan else ""))
    cmd = [options.recast_run, os.path.join(options.models, model + ".mlir"),
           "--entry=train_step", f"--steps={options.steps}", "--seed=1",
           "--report=json", f"--save={save}"]
    if config != "none":
        cmd.append(f"--remat={config}")
    if memory_plan:
        cmd.append("--memory-plan")
    start = time.time()
    result = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.time() - start
    if result.returncode != 0:
        # The first line of the diagnostic says why (an impossible budget
        # states the smallest peak recast reaches).
        message = next((line for line in result.stderr.splitlines()
                        if "error" in line), result.stderr.strip())
        return {"error": message, "seconds": seconds}
    report = json.loads(result.stdout)
    report["save"] = save
    report["seconds"] = seconds
    return report


def bitwise_equal(a, b):
    import numpy as np
    files = sorted(f for f in os.listdir(a) if f.endswith(".npy"))
    return all(np.array_equal(np.load(os.path.join(a, f)),
                              np.load(os.path.join(b, f))) for f in files)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-run")
    parser.add_argument("--models")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated models")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--out", default="")
    parser.add_argument("--memory-plan", action="store_true",
                        help="run every step with recast-run --memory-plan")
    parser.add_argument("--render", nargs="*", default=None,
                        help="only print the table of these JSON outputs "
                             "(later files replace rows of earlier ones)")
    options = parser.parse_args()
    if options.render is not None:
        merged = {}
        for path in options.render:
            with open(path) as f:
                for row in json.load(f):
                    merged[(row["model"], row["config"])] = row
        render(list(merged.values()))
        return
    models = options.only.split(",") if options.only else MODELS
    configs = options.configs.split(",")
    if "none" not in configs:
        configs.insert(0, "none")

    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for model in models:
            base = run(options, model, "none", workdir)
            if "error" in base:
                print(f"{model}: {base['error']}", file=sys.stderr)
                continue
            # The reference of "bitwise": no remat, no plan.
            reference = run(options, model, "none", workdir,
                            memory_plan=False) if options.memory_plan else base
            for config in configs:
                report = base if config == "none" else \
                    run(options, model, config, workdir)
                row = {"model": model, "config": config,
                       "baseline_static_peak": base["static_peak_bytes"],
                       "baseline_measured_peak": base["measured_peak_bytes"],
                       "seconds": report["seconds"]}
                try:
                    row["budget"] = int(float(config) *
                                        base["static_peak_bytes"])
                except ValueError:
                    row["budget"] = None
                if "error" in report:
                    row["error"] = report["error"]
                else:
                    row["static_peak"] = report["static_peak_bytes"]
                    row["measured_peak"] = report["measured_peak_bytes"]
                    row["bitwise"] = report is reference or bitwise_equal(
                        reference["save"], report["save"])
                    if "memory_plan" in report:
                        plan = report["memory_plan"]
                        row["arena"] = plan["arena_bytes"]
                        row["liveness_peak"] = plan["liveness_peak_bytes"]
                        row["fragmentation"] = plan["fragmentation"]
                        row["returned_bytes"] = plan["returned_bytes"]
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)

    if options.out:
        with open(options.out, "w") as f:
            json.dump(rows, f, indent=1)

    render(rows)


def describe_error(row):
    """An impossible budget as the smallest peak recast reached, as a
    fraction of the peak without remat; other errors as they are."""
    match = re.search(r"the smallest peak recast reaches is (\d+)",
                      row["error"])
    if match:
        reached = int(match.group(1))
        return (f"infeasible: smallest peak reached {reached:,} "
                f"({reached / row['baseline_static_peak']:.2f})")
    return row["error"]


def render(rows):
    planned = any("arena" in row for row in rows)
    extra = " arena | liveness peak | fragmentation |" if planned else ""
    print("| model | remat | budget | static peak | measured peak | "
          "measured / budget | measured / no-remat measured | bitwise |" +
          extra)
    print("|---|---|---:|---:|---:|---:|---:|---|" +
          ("---:|---:|---:|" if planned else ""))
    for row in rows:
        budget = f"{row['budget']:,}" if row["budget"] else "-"
        if "error" in row:
            print(f"| {row['model']} | {row['config']} | {budget} | "
                  f"{describe_error(row)} | | | | |" +
                  (" | | |" if planned else ""))
            continue
        plan = ""
        if planned:
            plan = (f" {row['arena']:,} | {row['liveness_peak']:,} | "
                    f"{100 * row['fragmentation']:.1f}% |"
                    if "arena" in row else " - | - | - |")
        ratio = (f"{row['measured_peak'] / row['budget']:.3f}"
                 if row["budget"] else "-")
        print(f"| {row['model']} | {row['config']} | {budget} | "
              f"{row['static_peak']:,} | {row['measured_peak']:,} | {ratio} | "
              f"{row['measured_peak'] / row['baseline_measured_peak']:.3f} | "
              f"{'yes' if row['bitwise'] else 'NO'} |" + plan)


if __name__ == "__main__":
    main()
