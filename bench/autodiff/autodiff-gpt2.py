"""Autodiff and train-step construction time on the zoo's large models.

For each model: ops in the forward (@loss), ops in the differentiated
@train_step, and the wall time of `recast-opt --recast-autodiff --canonicalize`
(best of three runs, so that the 2-core machine's noise does not inflate it).

    /usr/bin/python3 bench/autodiff/autodiff-gpt2.py --recast-opt=build/bin/recast-opt
"""

import argparse
import os
import re
import subprocess
import time

MODELS = ["gpt-gpt2-small", "resnet18-paper", "vgg16-paper", "unet-paper"]


def count_ops(text, function):
    match = re.search(rf"func\.func (private )?@{function}\(", text)
    if not match:
        return 0
    body = re.split(r"\n  func\.func ", text[match.end():])[0]
    return sum(1 for line in body.splitlines()
               if re.match(r"\s+(%\S+ = )?\"?[a-z_]+\.[a-z_.0-9]+", line))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-opt", required=True)
    parser.add_argument("--models", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "examples", "models"))
    options = parser.parse_args()
    print(f"| model | ops in @loss | ops in @train_step after autodiff | autodiff + canonicalize (s) |")
    print("|---|---:|---:|---:|")
    for model in MODELS:
        path = os.path.join(options.models, model + ".mlir")
        with open(path) as f:
            source = f.read()
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            out = subprocess.run([options.recast_opt, path, "--recast-autodiff",
                                  "--canonicalize"], capture_output=True, text=True,
                                 check=True).stdout
            best = min(best, time.perf_counter() - start)
        print(f"| {model} | {count_ops(source, 'loss')} | "
              f"{count_ops(out, 'train_step')} | {best:.2f} |")


if __name__ == "__main__":
    main()
