"""Bytes and pass time of mixed precision on the zoo's large models.

For each model and compute type (FP32, bf16, f16, fp8, and fp8+bf16: FP8
layers among bf16 ops, the pipeline's fp8-other-type=bf16): the parameter bytes,
the activation bytes the forward saves for the backward (and apart, the
parameter copies it saves) and those live at the peak, and the peak of the
differentiated @train_step, from
--recast-memory-report; and the wall
time of the --recast-mixed-precision and --recast-fp8-scaling passes (best of --repeat runs, from
--mlir-timing, so that parsing and printing do not count). Ratios are against
FP32 in the same run.

    /usr/bin/python3 bench/mixed-precision/mp-bench.py --recast-opt=build/bin/recast-opt
"""

import argparse
import json
import os
import re
import subprocess

MODELS = ["gpt-gpt2-small", "resnet18-paper", "vgg16-paper",
          "mobilenetv2-paper", "unet-paper"]
TYPES = ["fp32", "bf16", "f16", "fp8", "fp8+bf16"]
# The passes after autodiff for each compute type, as the training pipeline
# runs them.
PASSES = {
    "fp32": [],
    "bf16": ["--recast-mixed-precision=compute-type=bf16"],
    "f16": ["--recast-mixed-precision=compute-type=f16"],
    "fp8": ["--recast-fp8-scaling"],
    "fp8+bf16": ["--recast-mixed-precision=compute-type=bf16 "
                 "keep-gradient-marks=true", "--recast-fp8-scaling"],
}
TIMED_PASSES = r"RecastMixedPrecisionPass|RecastFP8ScalingPass"


def measure(recast_opt, path, compute_type):
    command = [recast_opt, path, "--recast-autodiff"] + PASSES[compute_type]
    command += ["--recast-memory-report=report=-", "-o", os.devnull,
                "--mlir-timing", "--mlir-timing-display=list"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        first = (run.stderr.strip().splitlines() or ["failed"])[0]
        return None, first
    report = next(f for f in json.loads(run.stdout)["functions"]
                  if f["function"] == "train_step")
    seconds = 0.0
    for line in run.stderr.splitlines():
        match = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(" + TIMED_PASSES + ")",
                         line)
        if match:
            seconds += float(match.group(1))
    return {
        "params": report["totals"]["param_bytes"],
        "activations_at_peak": report["at_peak"]["activation_bytes"],
        "saved": report["saved_activation_bytes"],
        "saved_copies": report["saved_param_copy_bytes"],
        "peak": report["peak_bytes"],
        "seconds": seconds,
    }, None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-opt", required=True)
    parser.add_argument("--models", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "examples", "models"))
    parser.add_argument("--only", default="",
                        help="comma-separated model names (default: all)")
    parser.add_argument("--repeat", type=int, default=1)
    options = parser.parse_args()
    models = options.only.split(",") if options.only else MODELS

    print("| model | type | params (MB) | saved for the backward (MB) | "
          "parameter copies saved (MB) | activations at peak (MB) | "
          "peak (MB) | vs FP32 (saved / at peak / peak) | pass time (s) |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|")
    mb = 1e-6
    for model in models:
        path = os.path.join(options.models, model + ".mlir")
        base = None
        for compute_type in TYPES:
            best, error = None, None
            for _ in range(options.repeat):
                result, error = measure(options.recast_opt, path, compute_type)
                if result is None:
                    break
                if best is None or result["seconds"] < best["seconds"]:
                    best = result
            if best is None:
                print(f"| {model} | {compute_type} | {error} ||||||||")
                continue
            if compute_type == "fp32":
                base = best
            ratios = "-" if compute_type == "fp32" or base is None else (
                f"{best['saved'] / base['saved']:.3f} / "
                f"{best['activations_at_peak'] / base['activations_at_peak']:.3f} / "
                f"{best['peak'] / base['peak']:.3f}")
            seconds = "-" if compute_type == "fp32" else f"{best['seconds']:.2f}"
            print(f"| {model} | {compute_type} | {best['params'] * mb:.1f} | "
                  f"{best['saved'] * mb:.1f} | {best['saved_copies'] * mb:.1f} | "
                  f"{best['activations_at_peak'] * mb:.1f} | {best['peak'] * mb:.1f} | "
                  f"{ratios} | {seconds} |", flush=True)


if __name__ == "__main__":
    main()
