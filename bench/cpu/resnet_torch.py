"""The zoo's ResNet-18 small (examples/models/resnet18-small.mlir, built by
python/recast/zoo.py: CIFAR 32x32x3, 3x3 stem without max pool, widths 8-64,
BasicBlocks, training-mode batch norm, global average pool, linear
classifier, softmax cross-entropy, SGD lr 0.01, batch 4) in PyTorch eager,
timed, channels-last as recast's NHWC.

  resnet_torch.py [--device cpu|cuda] [--precision fp32|bf16] [--steps N]

Prints `torch <precision> step_ms <value> loss <value>`.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch_step  # noqa: E402


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
    args = torch_step.arguments(default_device="cpu", default_steps=30).parse_args()
    torch.manual_seed(0)
    dev = args.device
    model = ResNet18().to(dev).to(memory_format=torch.channels_last).train()
    x = torch.rand(4, 3, 32, 32, device=dev).to(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (4,), device=dev)

    def loss():
        return F.cross_entropy(model(x).float(), y)

    torch_step.run(args, torch.optim.SGD(model.parameters(), lr=0.01), loss)


if __name__ == "__main__":
    main()
