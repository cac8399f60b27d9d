"""Step time of PyTorch models trained through recast.torch, next to
PyTorch eager on the same machine in the same run, as ratios (recast /
PyTorch; below 1 is faster), with recast's compile time beside it.

  RECAST_BUILD_DIR=build ~/.cache/recast/venv/bin/python \\
      bench/torch/torch-models.py [--steps N] [--threads 1,2] [--models ...]
      [--precisions fp32 bf16] [--compile]

The models are those of python/tests/test_torch.py (MLP, GPT-2-style
decoder, TransformerEncoderLayer, CNN, torchvision ResNet-18 in training
mode), SGD; fp32, and bf16 (recast's mixed_precision="bf16" next to
torch.autocast(bfloat16)). Each thread count runs in a process of its own,
with OpenBLAS's and PyTorch's thread counts set before either loads.
recast's time is Program.step's, which copies the arguments in and the
results out on every call. --compile adds torch.compile's step (Inductor;
the model's forward and backward compiled, the optimizer eager, as
`torch.compile(model)` gives a user), recast's ratio to it and its compile
time (the first step's).
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


def time_torch_steps(model, inputs, target, loss_fn, precision, steps):
    """Median ms of `steps` SGD steps of `model` after 3 warm-up steps, and
    the seconds the first step took."""
    import torch
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    times = []
    for i in range(steps + 3):
        t0 = time.perf_counter()
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16,
                            enabled=precision == "bf16"):
            loss = loss_fn(model(*inputs), target)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[3:]) * 1e3, times[0]


def measure(models, steps, threads, precisions, compile_baseline):
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
        for precision in precisions:
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
            torch_ms, _ = time_torch_steps(make(), inputs, target, loss_fn,
                                           precision, steps)
            row = {"model": name, "precision": precision,
                   "recast_ms": recast_ms, "torch_ms": torch_ms,
                   "compile_s": compile_s}
            if compile_baseline:
                torch.manual_seed(0)
                model = make()
                row["compiled_ms"], row["torch_compile_s"] = \
                    time_torch_steps(torch.compile(model), inputs, target,
                                     loss_fn, precision, steps)
            rows.append(row)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--models", nargs="*",
                        default=["mlp", "gpt", "encoder", "cnn", "resnet18"])
    parser.add_argument("--precisions", nargs="*", default=["fp32", "bf16"],
                        choices=["fp32", "bf16"])
    parser.add_argument("--compile", action="store_true",
                        help="also time torch.compile's step")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child is not None:
        print(json.dumps(measure(options.models, options.steps,
                                 options.child, options.precisions,
                                 options.compile)))
        return
    if options.compile:
        print("| model | precision | threads | recast ms | PyTorch eager ms | "
              "ratio | torch.compile ms | ratio | recast compile s | "
              "torch.compile s |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    else:
        print("| model | precision | threads | recast ms | PyTorch eager ms | "
              "ratio | recast compile s |")
        print("|---|---|---:|---:|---:|---:|---:|")
    for threads in options.threads.split(","):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads,
                   OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        out = subprocess.run(
            [sys.executable, __file__, "--child", threads, "--steps",
             str(options.steps), "--models", *options.models,
             "--precisions", *options.precisions,
             *(["--compile"] if options.compile else [])],
            env=env, capture_output=True, text=True, check=True)
        for row in json.loads(out.stdout.strip().splitlines()[-1]):
            cells = [row["model"], row["precision"], threads,
                     f"{row['recast_ms']:.2f}", f"{row['torch_ms']:.2f}",
                     f"{row['recast_ms'] / row['torch_ms']:.2f}"]
            if options.compile:
                cells += [f"{row['compiled_ms']:.2f}",
                          f"{row['recast_ms'] / row['compiled_ms']:.2f}"]
            cells.append(f"{row['compile_s']:.1f}")
            if options.compile:
                cells.append(f"{row['torch_compile_s']:.1f}")
            print("| " + " | ".join(str(c) for c in cells) + " |",
                  flush=True)


if __name__ == "__main__":
    main()
