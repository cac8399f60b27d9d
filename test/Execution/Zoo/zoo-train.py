"""Every small model of the zoo trains with recast-run on the CPU: 20 steps
of its @train_step (autodiff, SGD) from the seeded initialization; the
mean loss of the last five steps is below that of the first five, and the
last loss is below the first (small batches make single steps noisy).

# RUN: %python %s --recast-run=recast-run --models=%examples/models
"""

import argparse
import json
import os
import subprocess
import sys

MODELS = ["mlp-small", "gpt-tiny", "resnet18-small", "vgg16-small",
          "mobilenetv2-small", "unet-small"]
STEPS = 20


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-run", required=True)
    parser.add_argument("--models", required=True)
    options = parser.parse_args()
    failed = False
    for model in MODELS:
        path = os.path.join(options.models, model + ".mlir")
        result = subprocess.run(
            [options.recast_run, path, "--entry=train_step", f"--steps={STEPS}",
             "--seed=0", "--report=json"], capture_output=True, text=True)
        if result.returncode != 0:
            print(f"FAIL {model}: recast-run failed\n{result.stderr}")
            failed = True
            continue
        report = json.loads(result.stdout)
        losses = report["losses"]
        ups = sum(1 for a, b in zip(losses, losses[1:]) if b > a)
        ok = losses[-1] < losses[0] and sum(losses[-5:]) < sum(losses[:5])
        print(f"{'PASS' if ok else 'FAIL'} {model}: loss {losses[0]:.4f} -> "
              f"{losses[-1]:.4f} ({ups} of {STEPS - 1} steps up), compile "
              f"{report['compile_ms'] / 1000:.1f} s, measured peak "
              f"{report['measured_peak_bytes']} bytes")
        failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
