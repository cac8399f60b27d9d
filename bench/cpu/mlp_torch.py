"""The MLP example's training step (examples/mlp/train_step.mlir: 784-256-10,
batch 64, ReLU, softmax cross-entropy, SGD lr 0.1) in PyTorch eager, timed.

  mlp_torch.py [--device cpu|cuda] [--precision fp32|bf16] [--steps N]

Prints `torch <precision> step_ms <value> loss <value>`.
"""
import argparse
import time

import torch
import torch.nn.functional as F


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    torch.manual_seed(0)
    dev = args.device
    w1 = (torch.randn(784, 256, device=dev) * 0.05).requires_grad_()
    b1 = torch.zeros(256, device=dev, requires_grad=True)
    w2 = (torch.randn(256, 10, device=dev) * 0.05).requires_grad_()
    b2 = torch.zeros(10, device=dev, requires_grad=True)
    params = [w1, b1, w2, b2]
    opt = torch.optim.SGD(params, lr=0.1)
    x = torch.rand(64, 784, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    cuda = dev.startswith("cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda" if cuda else "cpu",
                            dtype=torch.bfloat16,
                            enabled=args.precision == "bf16"):
            logits = F.relu(x @ w1 + b1) @ w2 + b2
        loss = F.cross_entropy(logits.float(), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(args.warmup):
        step()
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    if cuda:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - start) * 1e3 / args.steps
    print(f"torch {args.precision} step_ms {ms:.4f} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
