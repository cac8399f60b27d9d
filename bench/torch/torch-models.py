"""Step time of PyTorch models trained through recast.torch, next to
PyTorch eager on the same machine in the same run, as ratios (recast /
PyTorch; below 1 is faster), with recast's compile time beside it.

  RECAST_BUILD_DIR=build ~/.cache/recast/venv/bin/python \\
      bench/torch/torch-models.py [--steps N] [--threads 1,2] [--models ...]

The models are those of python/tests/test_torch.py (MLP, GPT-2-style
decoder, TransformerEncoderLayer, CNN, torchvision ResNet-18 in training
mode), SGD; fp32, and bf16 (recast's mixed_precision="bf16" next to
torch.autocast(bfloat16)). Each thread count runs in a process of its own,
with OpenBLAS's and PyTorch's thread counts set before either loads.
recast's time is Program.step's, which copies the arguments in and the
results out on every call.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def measure(models, steps, threads):
    sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import torch
    torch.set_num_threads(threads)
    import torch.nn.functional as F
    import torchvision
    import test_torch as zoo
    import recast.torch as rt

    def batch_mlp():
        return zoo.mlp_batch()

    def gpt():
        g = torch.Generator().manual_seed(2)
        return (torch.randint(0, 64, (2, 16), generator=g),), \
            torch.randint(0, 64, (2, 16), generator=g)

    def encoder():
        g = torch.Generator().manual_seed(3)
        return (torch.randn(2, 16, 32, generator=g),), \
            torch.randn(2, 16, 1, generator=g)

    def images(size):
        g = torch.Generator().manual_seed(4)
        return (torch.randn(8, 3, size, size, generator=g),), \
            torch.randint(0, 10, (8,), generator=g)

    cases = {
        "mlp": (zoo.make_mlp, batch_mlp, F.cross_entropy),
        "gpt": (zoo.GPT, gpt, zoo.lm_loss),
        "encoder": (zoo.Encoder, encoder, F.mse_loss),
        "cnn": (zoo.make_cnn, lambda: images(16), F.cross_entropy),
        "resnet18": (lambda: torchvision.models.resnet18(num_classes=10)
                     .train(), lambda: images(32), F.cross_entropy),
    }
    rows = []
    for name in models:
        make, data, loss_fn = cases[name]
        inputs, target = data()
        for precision in ("fp32", "bf16"):
            torch.manual_seed(0)
            model = make()
            start = time.perf_counter()
            step = rt.export_step(model, inputs, target, loss_fn, lr=0.01)
            options = {"mixed_precision": "bf16"} if precision == "bf16" \
                else {}
            program = step.compile(**options)
            compile_s = time.perf_counter() - start
            params = step.params_from(model)
            batch = step.batch(*inputs, target)
            batch.update(step.buffers_from(model))
            times = []
            for i in range(steps + 3):
                t0 = time.perf_counter()
                _, params = program.step(params, batch)
                if i >= 3:
                    times.append(time.perf_counter() - t0)
            recast_ms = statistics.median(times) * 1e3

            torch.manual_seed(0)
            reference = make()
            opt = torch.optim.SGD(reference.parameters(), lr=0.01)
            times = []
            for i in range(steps + 3):
                t0 = time.perf_counter()
                opt.zero_grad()
                with torch.autocast("cpu", dtype=torch.bfloat16,
                                    enabled=precision == "bf16"):
                    loss = loss_fn(reference(*inputs), target)
                loss.backward()
                opt.step()
                if i >= 3:
                    times.append(time.perf_counter() - t0)
            torch_ms = statistics.median(times) * 1e3
            rows.append({"model": name, "precision": precision,
                         "recast_ms": recast_ms, "torch_ms": torch_ms,
                         "compile_s": compile_s})
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--models", nargs="*",
                        default=["mlp", "gpt", "encoder", "cnn", "resnet18"])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child is not None:
        print(json.dumps(measure(options.models, options.steps,
                                 options.child)))
        return
    print("| model | precision | threads | recast ms | PyTorch eager ms | "
          "ratio | recast compile s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for threads in options.threads.split(","):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads,
                   OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        out = subprocess.run(
            [sys.executable, __file__, "--child", threads, "--steps",
             str(options.steps), "--models", *options.models],
            env=env, capture_output=True, text=True, check=True)
        for row in json.loads(out.stdout.strip().splitlines()[-1]):
            print(f"| {row['model']} | {row['precision']} | {threads} | "
                  f"{row['recast_ms']:.2f} | {row['torch_ms']:.2f} | "
                  f"{row['recast_ms'] / row['torch_ms']:.2f} | "
                  f"{row['compile_s']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
