"""The zoo's ResNet-18 small (examples/models/resnet18-small.mlir, built by
python/recast/zoo.py: CIFAR 32x32x3, 3x3 stem without max pool, widths 8-64,
BasicBlocks, training-mode batch norm, global average pool, linear
classifier, softmax cross-entropy, SGD lr 0.01, batch 4) in PyTorch eager,
timed, channels-last as recast's NHWC.

  resnet_torch.py [--device cpu|cuda] [--precision fp32|bf16] [--steps N]

Prints `torch <precision> step_ms <value> loss <value>`.
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(cin, cout, kernel, stride, padding):
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, padding, bias=False),
                         nn.BatchNorm2d(cout))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = conv_bn(cin, cout, 3, stride, 1)
        self.conv2 = conv_bn(cout, cout, 3, 1, 1)
        self.shortcut = (conv_bn(cin, cout, 1, stride, 0)
                         if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        y = self.conv2(F.relu(self.conv1(x)))
        return F.relu(y + self.shortcut(x))


class ResNet18(nn.Module):
    def __init__(self, width=8, classes=10):
        super().__init__()
        self.stem = conv_bn(3, width, 3, 1, 1)
        blocks, cin = [], width
        for stage in range(4):
            cout = width * 2 ** stage
            for block in range(2):
                blocks.append(BasicBlock(cin, cout, 2 if stage > 0 and block == 0 else 1))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        h = self.blocks(F.relu(self.stem(x)))
        return self.fc(h.mean(dim=(2, 3)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    torch.manual_seed(0)
    dev = args.device
    model = ResNet18().to(dev).to(memory_format=torch.channels_last).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.rand(4, 3, 32, 32, device=dev).to(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (4,), device=dev)
    cuda = dev.startswith("cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda" if cuda else "cpu",
                            dtype=torch.bfloat16,
                            enabled=args.precision == "bf16"):
            logits = model(x)
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
