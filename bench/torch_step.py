"""What the PyTorch peers of the benchmarks share: their command line and a
timed eager training step (SGD, the forward under torch.autocast(bfloat16)
for bf16 with the parameters and optimizer in FP32).

  args = torch_step.arguments(default_device="cpu").parse_args()
  torch_step.run(args, optimizer, loss_fn)

`loss_fn()` runs the forward and returns the loss. `run` times `--steps`
steps after `--warmup` and prints `torch <precision> step_ms <ms> loss <loss>`
(bench/cpu/step-vs-torch and scripts/gpu-check read the fourth field).
With `--compile` the forward (and through AOTAutograd the backward) runs
as `torch.compile` makes it (Inductor); the line then ends with
`compile_s <s>`, the time of the first step, which compiles.
"""
import argparse
import time

import torch


def arguments(default_device="cpu", default_steps=50):
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default=default_device)
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    parser.add_argument("--steps", type=int, default=default_steps)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--compile", action="store_true",
                        help="run the forward through torch.compile")
    return parser


def run(args, optimizer, loss_fn):
    cuda = args.device.startswith("cuda")
    if args.compile:
        loss_fn = torch.compile(loss_fn)

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda" if cuda else "cpu",
                            dtype=torch.bfloat16,
                            enabled=args.precision == "bf16"):
            loss = loss_fn()
        loss.backward()
        optimizer.step()
        return loss

    start = time.perf_counter()
    step()
    if cuda:
        torch.cuda.synchronize()
    first_s = time.perf_counter() - start
    for _ in range(args.warmup - 1):
        step()
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    if cuda:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - start) * 1e3 / args.steps
    line = f"torch {args.precision} step_ms {ms:.4f} loss {loss.item():.4f}"
    if args.compile:
        line += f" compile_s {first_s:.1f}"
    print(line)
