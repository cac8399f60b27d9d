"""Compares the losses of two `recast-run --report=json` outputs.

  compare_runs.py A.json B.json RTOL

Prints one line per step and fails when a loss differs by more than RTOL
relative (plus 1e-6 absolute), or when the step counts differ.
"""
import json
import sys


def main():
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
    rtol = float(sys.argv[3])
    la, lb = a["losses"], b["losses"]
    if len(la) != len(lb):
        sys.exit(f"step counts differ: {len(la)} vs {len(lb)}")
    worst = 0.0
    for step, (x, y) in enumerate(zip(la, lb), 1):
        diff = abs(x - y)
        worst = max(worst, diff / max(abs(y), 1e-12))
        print(f"step {step}: {x:.6f} {y:.6f}")
        if diff > rtol * abs(y) + 1e-6:
            sys.exit(f"step {step}: loss {x} vs {y} differs by more than "
                     f"rtol {rtol}")
    print(f"losses agree (worst relative difference {worst:.2e})")


if __name__ == "__main__":
    main()
