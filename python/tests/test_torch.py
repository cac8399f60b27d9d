"""PyTorch models exported by recast.torch (torch.export + torch-mlir's FX
importer, nothing rewritten by hand) train in recast as in PyTorch: the
losses of five optimizer steps and the final parameters agree with torch's
FP32 autograd and optimizers to 1e-5 relative; bf16 stays within the range
of torch's own CPU autocast; a remat budget keeps the losses bitwise. These
tests need the venv of scripts/setup-python-venv, and never skip."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import recast
import recast.torch as rt
from conftest import ROOT

STEPS = 5


def torch_reference(model, inputs, target, loss_fn, optimizer, lr, steps):
    """Losses and final parameters of `steps` steps of torch.optim."""
    params = list(model.parameters())
    if optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=lr)
    elif optimizer == "momentum":
        opt = torch.optim.SGD(params, lr=lr, momentum=0.9)
    else:
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(*inputs), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, {k: v.detach().numpy().copy()
                    for k, v in model.named_parameters()}


def recast_run(step, model, inputs, target, steps, **options):
    # libm's exp, log, tanh and erf, as PyTorch uses: the comparison is then
    # down to summation order.
    options.setdefault("approximate_math", False)
    program = step.compile(**options)
    params = step.params_from(model)
    batch = step.batch(*inputs, target)
    batch.update(step.buffers_from(model))
    losses = []
    for _ in range(steps):
        loss, params = program.step(params, batch)
        losses.append(loss)
    return losses, params, program


def check_parity(make_model, inputs, target, loss_fn, optimizer, lr,
                 rtol=1e-5, atol=1e-7):
    torch.manual_seed(0)
    model = make_model()
    reference_model = make_model()
    reference_model.load_state_dict(model.state_dict())
    model_before = make_model()
    model_before.load_state_dict(model.state_dict())
    step = rt.export_step(model, inputs, target, loss_fn, optimizer=optimizer,
                          lr=lr)
    losses, params, _ = recast_run(step, model, inputs, target, STEPS)
    expected, expected_params = torch_reference(
        reference_model, inputs, target, loss_fn, optimizer, lr, STEPS)
    np.testing.assert_allclose(losses, expected, rtol=rtol)
    # AdamW divides each element's gradient by its own magnitude: an element
    # whose exact gradient is zero (attention's key bias, which softmax does
    # not see) or cancels to almost nothing moves by up to lr on rounding
    # noise alone, in any framework. Those elements (float64 gradient below
    # 1e-4 of the tensor's largest) are left out, and the others compared to
    # 0.1% of a step.
    exact = float64_gradients(model_before, inputs, target, loss_fn) \
        if optimizer == "adamw" else {}
    for key, name in step.param_names.items():
        actual, wanted = params[name], expected_params[key]
        if key in exact:
            g = np.abs(exact[key])
            keep = g > 1e-4 * g.max()
            actual, wanted = actual[keep], wanted[keep]
            atol = max(atol, 1e-3 * lr)
        np.testing.assert_allclose(actual, wanted, rtol=rtol, atol=atol,
                                   err_msg=key)
    return step, model, losses


def float64_gradients(model, inputs, target, loss_fn):
    model = model.double()
    inputs = [x.double() if x.is_floating_point() else x for x in inputs]
    target = target.double() if target.is_floating_point() else target
    loss_fn(model(*inputs), target).backward()
    return {k: v.grad.numpy() for k, v in model.named_parameters()}


def make_mlp():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def mlp_batch():
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(8, 784, generator=generator)
    y = torch.randint(0, 10, (8,), generator=generator)
    return (x,), y


@pytest.mark.parametrize("optimizer,lr", [("sgd", 0.1), ("adamw", 1e-3)])
def test_mlp_cross_entropy_matches_torch(optimizer, lr):
    inputs, target = mlp_batch()
    step, _, _ = check_parity(make_mlp, inputs, target, F.cross_entropy,
                              optimizer, lr)
    # Parameters are named after their state_dict keys.
    assert step.param_names == {"0.weight": "v0_weight", "0.bias": "v0_bias",
                                "2.weight": "v2_weight", "2.bias": "v2_bias"}
    assert "func.func private @loss" in step.text
    assert "{recast.param}" in step.text


class Block(nn.Module):
    """A pre-LN GPT-2 block: causal attention through
    F.scaled_dot_product_attention, tanh GELU."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for y in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, c))
        return x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    """Token and position embeddings, two blocks, the LM head tied to the
    token embedding."""

    def __init__(self, vocab=64, seq=16, d=32, heads=2, layers=2):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight
        # GPT-2's initialization (N(0, 0.02) embeddings), so that the first
        # loss is near log(vocab) instead of the tied head's ~20.
        for embedding in (self.wte, self.wpe):
            nn.init.normal_(embedding.weight, std=0.02)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           targets.reshape(-1))


@pytest.mark.parametrize("optimizer,lr", [("sgd", 0.05), ("adamw", 1e-3)])
def test_gpt_matches_torch(optimizer, lr):
    generator = torch.Generator().manual_seed(2)
    tokens = torch.randint(0, 64, (2, 16), generator=generator)
    targets = torch.randint(0, 64, (2, 16), generator=generator)
    step, _, losses = check_parity(GPT, (tokens,), targets, lm_loss,
                                   optimizer, lr)
    # The tied head is one parameter: the embedding.
    assert "head.weight" not in step.param_names
    assert losses[-1] < losses[0]


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=32, nhead=4,
                                                batch_first=True, dropout=0)
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(self.layer(x))


@pytest.mark.parametrize("optimizer,lr", [("sgd", 0.01), ("adamw", 1e-3)])
def test_transformer_encoder_mse_matches_torch(optimizer, lr):
    generator = torch.Generator().manual_seed(3)
    x = torch.randn(2, 16, 32, generator=generator)
    y = torch.randn(2, 16, 1, generator=generator)
    check_parity(Encoder, (x,), y, F.mse_loss, optimizer, lr)


def make_cnn():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(16, 10))


@pytest.mark.parametrize("optimizer,lr", [("sgd", 0.05), ("adamw", 1e-3)])
def test_cnn_matches_torch(optimizer, lr):
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(8, 3, 16, 16, generator=generator)
    y = torch.randint(0, 10, (8,), generator=generator)
    check_parity(make_cnn, (x,), y, F.cross_entropy, optimizer, lr)


def test_gelu_tanh_gradient_is_exact():
    """torch-mlir lowers gelu(approximate="tanh") with sqrt(2/pi) as
    0.797724; recast.torch decomposes it with PyTorch's exact constants, so
    the gradient agrees with float64 autograd to float32 rounding."""
    class Gelu(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.linspace(-4, 4, 64))

        def forward(self, x):
            return F.gelu(self.w * x, approximate="tanh")

    model, ones = Gelu(), torch.ones(64)
    step = rt.export_step(model, (ones,), ones, lambda out, y: (out * y).sum(),
                          lr=1000.0)
    before = step.params_from(model)
    _, after = step.compile(approximate_math=False).step(
        dict(before), step.batch(ones, ones))
    gradient = (before["w"] - after["w"]) / 1000.0
    w64 = torch.linspace(-4, 4, 64, dtype=torch.float64, requires_grad=True)
    F.gelu(w64, approximate="tanh").sum().backward()
    np.testing.assert_allclose(gradient, w64.grad.numpy(), atol=2e-6)


def test_mlp_bf16_within_autocast_range():
    inputs, target = mlp_batch()
    torch.manual_seed(0)
    model = make_mlp()
    step = rt.export_step(model, inputs, target, F.cross_entropy, lr=0.1)
    fp32, _, _ = recast_run(step, model, inputs, target, STEPS)
    # bf16 against torch's CPU autocast on the same run: recast's gap to
    # FP32 is within twice autocast's (and never above 2%).
    bf16, _, _ = recast_run(step, model, inputs, target, STEPS,
                            mixed_precision="bf16")
    reference = make_mlp()
    reference.load_state_dict(model.state_dict())
    opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    autocast = []
    for _ in range(STEPS):
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(reference(*inputs), target)
        loss.backward()
        opt.step()
        autocast.append(loss.item())
    gap = np.abs(np.array(bf16) - fp32) / np.array(fp32)
    torch_gap = np.abs(np.array(autocast) - fp32) / np.array(fp32)
    assert gap.max() <= max(2 * torch_gap.max(), 1e-3) and gap.max() < 0.02


def gpt_remat_run():
    """The GPT's losses and static peak without remat and at 0.8 of that
    peak, and the budget."""
    generator = torch.Generator().manual_seed(2)
    tokens = torch.randint(0, 64, (2, 16), generator=generator)
    targets = torch.randint(0, 64, (2, 16), generator=generator)
    torch.manual_seed(0)
    model = GPT()
    step = rt.export_step(model, (tokens,), targets, lm_loss, lr=0.05)
    plain, _, program = recast_run(step, model, (tokens,), targets, STEPS)
    peak = program.report["peak_bytes"]
    budget = int(peak * 0.8)
    remat, _, remat_program = recast_run(step, model, (tokens,), targets,
                                         STEPS, remat=budget)
    return plain, remat, peak, remat_program.report["peak_bytes"], budget


def test_gpt_remat_keeps_losses_bitwise():
    """At a budget the step can reach, the losses are those without remat,
    bit for bit, and the static peak (which recast-run measures equal) is
    within the budget."""
    plain, remat, peak, remat_peak, budget = gpt_remat_run()
    assert remat == plain
    assert remat_peak <= budget < peak


def test_load_into_and_write(tmp_path):
    inputs, target = mlp_batch()
    torch.manual_seed(0)
    model = make_mlp()
    step = rt.export_step(model, inputs, target, F.cross_entropy, lr=0.1)
    losses, params, _ = recast_run(step, model, inputs, target, 1)
    step.load_into(model, params)
    np.testing.assert_array_equal(model[0].weight.detach().numpy(),
                                  params["v0_weight"])
    path = tmp_path / "step.mlir"
    step.write(path)
    assert "func.func @train_step(%v0_weight" in path.read_text()


def test_command_line(tmp_path):
    """python -m recast.torch writes a step file recast-run trains."""
    (tmp_path / "models.py").write_text(
        "import torch.nn as nn\n"
        "def mlp():\n"
        "    return nn.Sequential(nn.Linear(16, 8), nn.ReLU(), "
        "nn.Linear(8, 4))\n")
    out = tmp_path / "step.mlir"
    env = dict(os.environ)
    result = subprocess.run(
        [sys.executable, "-m", "recast.torch", "models:mlp", "--input", "4,16",
         "--target", "4:int64:4", "--optimizer", "momentum", "--lr", "0.05",
         "-o", str(out)], cwd=tmp_path, capture_output=True, text=True,
        env=env)
    assert result.returncode == 0, result.stderr
    assert "%v0_weight: param 0.weight [8, 16] float32" in result.stdout
    assert "%v0_weight_momentum_buffer: state" in result.stdout
    build = os.environ.get("RECAST_BUILD_DIR", "build")
    run = subprocess.run(
        [os.path.join(build, "bin", "recast-run"), str(out), "--steps=3",
         "--remat=full"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "step    3" in run.stdout


def test_torchvision_resnet18_train_mode_matches_torch():
    """torchvision's resnet18(num_classes=10) in training mode: NCHW
    convolutions and pooling as torch-mlir writes them, BatchNorm's batch
    statistics in the forward and its running statistics carried as state.
    At 32x32 the last stage normalizes 1x1 maps over a batch of 8, which
    makes training ill-conditioned: by the third step torch's own FP32 is
    7e-4 from its FP64 run, and any other summation order lands as far. So
    recast is measured against FP64, where the conditioning allows it: the
    losses of two steps, and the parameters and running statistics after
    one, as close to FP64 as torch's FP32 is (within twice its distance, or
    1e-5 of the value)."""
    import torchvision
    generator = torch.Generator().manual_seed(6)
    x = torch.randn(8, 3, 32, 32, generator=generator)
    y = torch.randint(0, 10, (8,), generator=generator)

    def make():
        return torchvision.models.resnet18(num_classes=10).train()

    torch.manual_seed(0)
    model = make()
    state = model.state_dict()
    step = rt.export_step(model, (x,), y, F.cross_entropy, lr=0.01)
    program = step.compile(approximate_math=False)
    batch = step.batch(x, y)
    loss1, after_one = program.step(step.params_from(model), batch)
    loss2, _ = program.step(dict(after_one), batch)

    def reference(dtype):
        net = make()
        net.load_state_dict(state)
        net = net.to(dtype)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        losses = []
        for i in range(2):
            opt.zero_grad()
            loss = F.cross_entropy(net(x.to(dtype)), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if i == 0:
                params = {k: v.detach().numpy().astype(np.float64)
                          for k, v in net.named_parameters()}
                buffers = {k: v.numpy().astype(np.float64)
                           for k, v in net.named_buffers()}
        return np.array(losses), params, buffers

    losses32, params32, buffers32 = reference(torch.float32)
    losses64, params64, buffers64 = reference(torch.float64)

    def check(actual, torch32, exact, what):
        actual = np.asarray(actual, dtype=np.float64)
        bound = 2 * np.abs(np.asarray(torch32, np.float64) - exact).max() + \
            1e-5 * np.abs(exact).max()
        assert np.abs(actual - exact).max() <= bound, what

    check([loss1, loss2], losses32, losses64, "losses")
    for key, name in step.param_names.items():
        check(after_one[name], params32[key], params64[key], key)
    step.load_into(model, after_one)
    for key, buffer in model.named_buffers():
        check(buffer.numpy(), buffers32[key], buffers64[key], key)


def test_unexportable_model_is_a_clear_error():
    """A model torch.export cannot trace gives ExportError, not a crash."""
    class DataDependent(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 4)

        def forward(self, x):
            if x.sum() > 0:  # control flow on data
                return self.linear(x)
            return -self.linear(x)

    with pytest.raises(rt.ExportError, match="torch.export cannot export"):
        rt.export_step(DataDependent(), (torch.randn(2, 4),),
                       torch.randn(2, 4), F.mse_loss)


def test_op_recast_cannot_train_names_the_model_line():
    """torch.cumsum becomes tm_tensor.scan, which recast does not read: the
    error names the op and the line of the model that made it."""
    class CumulativeSum(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 4)

        def forward(self, x):
            return torch.cumsum(self.linear(x), dim=1)

    line = CumulativeSum.forward.__code__.co_firstlineno + 1
    with pytest.raises(rt.ExportError,
                       match=r"recast cannot train 'tm_tensor\.scan', which "
                             r"torch-mlir emitted for the model \(from "
                             r".*test_torch\.py:%d\)" % line):
        rt.export_step(CumulativeSum(), (torch.randn(2, 4),),
                       torch.randn(2, 4), F.mse_loss)


def make_bn_cnn():
    # No bias before BatchNorm, as in torchvision's ResNets: its exact
    # gradient is zero (the normalization removes it), so AdamW would move
    # it on rounding noise alone and the running means with it.
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False),
                         nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 8, 3, padding=1, stride=2, bias=False),
                         nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(8, 10))


@pytest.mark.parametrize("optimizer,lr", [("sgd", 0.05), ("adamw", 1e-3)])
def test_batchnorm_running_statistics_match_torch(optimizer, lr):
    """BatchNorm in training mode: the running statistics are state the step
    updates functionally; after the steps they equal torch's."""
    generator = torch.Generator().manual_seed(5)
    x = torch.randn(8, 3, 16, 16, generator=generator)
    y = torch.randint(0, 10, (8,), generator=generator)
    torch.manual_seed(0)
    model = make_bn_cnn().train()
    reference = make_bn_cnn().train()
    reference.load_state_dict(model.state_dict())
    step = rt.export_step(model, (x,), y, F.cross_entropy,
                          optimizer=optimizer, lr=lr)
    roles = {a.key: a.role for a in step.arguments}
    assert roles["1.running_mean"] == roles["1.num_batches_tracked"] == \
        "model_state"
    losses, values, _ = recast_run(step, model, (x,), y, STEPS)
    expected, _ = torch_reference(reference, (x,), y, F.cross_entropy,
                                  optimizer, lr, STEPS)
    np.testing.assert_allclose(losses, expected, rtol=1e-5)
    step.load_into(model, values)
    for key, buffer in reference.named_buffers():
        np.testing.assert_allclose(dict(model.named_buffers())[key].numpy(),
                                   buffer.numpy(), rtol=1e-5, atol=1e-7,
                                   err_msg=key)
    assert int(dict(model.named_buffers())["1.num_batches_tracked"]) == STEPS


def test_threaded_step_then_torch_mlir_export():
    """A step whose kernels run on two threads, then torch-mlir's export in
    the same process: torch-mlir's own LLVM must not bind to libraries the
    step loaded (it aborted when a threaded step loaded MLIR's async runtime
    globally)."""
    script = (
        "import recast, recast.torch as rt, torch.nn as nn, torch\n"
        "program = recast.compile('examples/mlp/train_step.mlir')\n"
        "program.step(program.init_params(0), program.init_batch(0))\n"
        "model = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 4))\n"
        "step = rt.export_step(model, (torch.randn(4, 16),),\n"
        "                      torch.randint(0, 4, (4,)),\n"
        "                      nn.functional.cross_entropy)\n"
        "print('exported', len(step.params_from(model)))\n")
    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT,
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "exported 4" in result.stdout
