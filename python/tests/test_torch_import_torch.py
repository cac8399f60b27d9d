"""The torch.fx importer on real torch modules, against PyTorch's own
forward and gradients. Skipped where PyTorch is not installed."""

import numpy as np
import pytest

import recast

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the torch.fx importer's tests "
    "against PyTorch's forward and gradients need it (test_torch_import.py "
    "covers the translation without it)")
from recast.torch_import import import_module  # noqa: E402

LR = 0.5


def step_grads(imported, params, batch):
    program = recast.compile(imported.text, opt_level=0)
    loss, new = program.step(params, batch)
    return loss, {k: (params[k] - new[k]) / LR for k in params}


def compare_with_torch(module, inputs, target, loss_name):
    imported = import_module(module, {k: tuple(v.shape) for k, v in inputs.items()},
                             loss=loss_name, target_shape=tuple(target.shape), lr=LR)
    state = dict(module.named_parameters())
    params = imported.params_for_recast(state)
    batch = {k: v.numpy() for k, v in inputs.items()}
    batch["target"] = target.numpy()
    loss, grads = step_grads(imported, params, batch)

    module.zero_grad()
    out = module(*inputs.values())
    if loss_name == "mse":
        ref = torch.nn.functional.mse_loss(out, target)
    else:
        ref = torch.nn.functional.cross_entropy(out, target.argmax(1))
    ref.backward()
    assert loss == pytest.approx(ref.item(), rel=1e-4)
    got = imported.grads_to_torch(grads)
    for name, p in state.items():
        np.testing.assert_allclose(got[name], p.grad.numpy(), rtol=1e-3, atol=1e-5,
                                   err_msg=name)


def test_torch_mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4))
    x = torch.randn(8, 16)
    target = torch.nn.functional.one_hot(torch.arange(8) % 4, 4).float()
    # nn.Sequential's forward() names its argument `input`.
    compare_with_torch(model, {"input": x}, target, "cross_entropy")


class Block(torch.nn.Module):
    """A pre-norm transformer block on one sequence [T, D], one head."""

    def __init__(self, d=16, hidden=32):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(d)
        self.q = torch.nn.Linear(d, d)
        self.k = torch.nn.Linear(d, d)
        self.v = torch.nn.Linear(d, d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, hidden)
        self.act = torch.nn.GELU(approximate="tanh")
        self.fc2 = torch.nn.Linear(hidden, d)
        self.scale = d ** -0.5

    def forward(self, x):
        h = self.ln1(x)
        scores = self.q(h) @ self.k(h).t() * self.scale
        attn = torch.softmax(scores, dim=-1) @ self.v(h)
        x = x + self.proj(attn)
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


def test_torch_transformer_block():
    torch.manual_seed(0)
    block = Block()
    x = torch.randn(8, 16)
    target = torch.randn(8, 16)
    compare_with_torch(block, {"x": x}, target, "mse")


class BatchedAttention(torch.nn.Module):
    """Single-head self-attention on [B, T, D] with a residual."""

    def __init__(self, d=16):
        super().__init__()
        self.ln = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.ModuleList([torch.nn.Linear(d, d) for _ in range(3)])
        self.scale = d ** -0.5

    def forward(self, x):
        h = self.ln(x)
        q, k, v = (m(h) for m in self.qkv)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        return x + torch.matmul(torch.softmax(scores, dim=-1), v)


def test_torch_batched_attention():
    torch.manual_seed(0)
    module = BatchedAttention()
    x = torch.randn(2, 8, 16)
    compare_with_torch(module, {"x": x}, torch.randn(2, 8, 16), "mse")
