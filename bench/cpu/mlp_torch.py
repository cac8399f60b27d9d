"""The MLP example's training step (examples/mlp/train_step.mlir: 784-256-10,
batch 64, ReLU, softmax cross-entropy, SGD lr 0.1) in PyTorch eager, timed.

  mlp_torch.py [--device cpu|cuda] [--precision fp32|bf16] [--steps N]

Prints `torch <precision> step_ms <value> loss <value>`.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch_step  # noqa: E402


def main():
    args = torch_step.arguments(default_device="cpu", default_steps=50).parse_args()
    torch.manual_seed(0)
    dev = args.device
    w1 = (torch.randn(784, 256, device=dev) * 0.05).requires_grad_()
    b1 = torch.zeros(256, device=dev, requires_grad=True)
    w2 = (torch.randn(256, 10, device=dev) * 0.05).requires_grad_()
    b2 = torch.zeros(10, device=dev, requires_grad=True)
    params = [w1, b1, w2, b2]
    x = torch.rand(64, 784, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)

    def loss():
        logits = F.relu(x @ w1 + b1) @ w2 + b2
        return F.cross_entropy(logits.float(), y)

    torch_step.run(args, torch.optim.SGD(params, lr=0.1), loss)


if __name__ == "__main__":
    main()
