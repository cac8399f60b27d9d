"""Compares the final losses of recast-run JSON reports.

Usage: compare_losses.py REFERENCE.json RUN.json [RUN.json ...] --rtol=R

Prints one line per run with both final losses and their relative
difference, then PASS if every run is within R of the reference, else FAIL.
"""

import argparse
import json
import math


def final_loss(path):
    with open(path) as f:
        losses = json.load(f)["losses"]
    return len(losses), losses[-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("reference")
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--rtol", type=float, required=True)
    args = parser.parse_args()

    steps, reference = final_loss(args.reference)
    ok = math.isfinite(reference)
    for run in args.runs:
        run_steps, loss = final_loss(run)
        rel = abs(loss - reference) / abs(reference)
        within = run_steps == steps and math.isfinite(loss) and rel <= args.rtol
        ok = ok and within
        print(f"steps {run_steps} reference {reference:.6f} run {loss:.6f} "
              f"relative difference {rel:.4%} {'ok' if within else 'too far'}")
    print("PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()
