"""PyTorch models into recast training steps, through torch-mlir.

    import torch, torch.nn.functional as F, recast.torch
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    step = recast.torch.export_step(model, (x,), y, F.cross_entropy,
                                    optimizer="sgd", lr=0.1)
    step.write("mlp-step.mlir")            # recast-opt / recast-run input
    program = step.compile(mixed_precision="bf16")
    params = step.params_from(model)       # numpy, named as the step's arguments
    loss, params = program.step(params, step.batch(x, y))
    step.load_into(model, params)          # back into the nn.Module

The model and loss are exported with torch.export and torch-mlir's FX
importer (linalg-on-tensors), exactly as torch-mlir writes them: the
parameters become arguments of a private @loss, marked {recast.param} and
named after their state_dict keys (`0.weight` -> `%v0_weight`), and
recast-train-step builds @train_step with the optimizer. What torch-mlir
emits that recast's passes do not model directly (keepdim maps, gathers
with bounds checks, x**n) is handled by --recast-train-pipeline, which
recast-run, recast.compile and Program run.

The command line writes a step file:

    python -m recast.torch my_models:make_mlp --input 8,784 \\
        --target 8:int64:10 --loss cross_entropy --optimizer adamw -o step.mlir
"""

import argparse
import importlib
import re
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .builder import _sanitize


class ExportError(RuntimeError):
    """The model cannot be exported into a recast training step."""


@dataclass
class StepArgument:
    """One argument of the exported @train_step."""
    name: str           # the SSA name in the step (recast-run's --arg name)
    key: str            # the state_dict key, or the batch input's name
    # "param", "state" (the optimizer's), "model_state" (buffers the forward
    # updates, such as BatchNorm's running statistics) or "batch"
    role: str
    shape: Tuple[int, ...]
    dtype: str


_OPTIMIZER_STATE = {"sgd": (), "momentum": ("momentum_buffer",),
                    "adamw": ("exp_avg", "exp_avg_sq")}


class TorchStep:
    """A training step exported from an nn.Module: its MLIR text and the
    mapping between its arguments and the module's tensors."""

    def __init__(self, text: str, arguments: List[StepArgument],
                 input_names: List[str], target_name: str):
        self.text = text
        self.arguments = arguments
        self.input_names = input_names
        self.target_name = target_name

    @property
    def param_names(self) -> Dict[str, str]:
        """state_dict key -> argument name, for the parameters."""
        return {a.key: a.name for a in self.arguments if a.role == "param"}

    def write(self, path) -> None:
        with open(path, "w") as f:
            f.write(self.text)

    def compile(self, **options):
        """recast.compile on the step: `options` are those of
        --recast-train-pipeline (mixed_precision="bf16", remat=0.7, ...)."""
        from .api import compile as recast_compile
        return recast_compile(self.text, entry="train_step",
                              filename="train_step.mlir", **options)

    def params_from(self, model) -> Dict[str, np.ndarray]:
        """The module's parameters as the step's param arguments, and zeros
        for the optimizer state (PyTorch's initial state)."""
        tensors = dict(model.named_parameters())
        buffers = dict(model.named_buffers())
        values = {}
        for arg in self.arguments:
            if arg.role == "param":
                values[arg.name] = tensors[arg.key].detach().cpu().numpy() \
                    .astype(np.float32, copy=True)
            elif arg.role == "state":
                values[arg.name] = np.zeros(arg.shape, dtype=np.float32)
            elif arg.role == "model_state":
                values[arg.name] = buffers[arg.key].detach().cpu().numpy() \
                    .copy()
        return values

    def batch(self, *tensors) -> Dict[str, np.ndarray]:
        """The batch arguments for the model's inputs and the target, in the
        order export_step took them."""
        names = self.input_names + [self.target_name]
        if len(tensors) != len(names):
            raise ValueError(f"expected {len(names)} tensors "
                             f"({', '.join(names)}), got {len(tensors)}")
        by_key = {a.key: a for a in self.arguments if a.role == "batch"}
        values = {}
        for key, tensor in zip(names, tensors):
            arg = by_key[key]
            array = tensor.detach().cpu().numpy() if hasattr(tensor, "detach") \
                else np.asarray(tensor)
            values[arg.name] = np.ascontiguousarray(array, dtype=arg.dtype)
        for arg in by_key.values():  # buffers the forward reads
            if arg.key not in names and arg.name not in values:
                raise ValueError(f"no value for {arg.key}: use "
                                 "buffers_from(model)")
        return values

    def buffers_from(self, model) -> Dict[str, np.ndarray]:
        """The module's buffers that the step reads as batch arguments."""
        buffers = dict(model.named_buffers())
        return {a.name: buffers[a.key].detach().cpu().numpy()
                for a in self.arguments
                if a.role == "batch" and a.key in buffers}

    def load_into(self, model, values: Dict[str, np.ndarray]) -> None:
        """Copies the step's parameters and model state (running statistics)
        back into the module."""
        import torch
        tensors = dict(model.named_parameters())
        tensors.update(dict(model.named_buffers()))
        with torch.no_grad():
            for arg in self.arguments:
                if arg.role in ("param", "model_state"):
                    tensors[arg.key].copy_(torch.from_numpy(
                        np.asarray(values[arg.name])))


def _params_as_args(model, loss_fn, keys, num_inputs):
    """An nn.Module whose forward(*params, *buffers, *inputs, target) is the
    loss, the model's tensors passed in through torch.func.functional_call
    so that torch-mlir makes them function arguments instead of constants.
    Buffers the forward updates come back before the loss."""
    import torch

    class Wrapper(torch.nn.Module):
        def forward(self, *args):
            state = dict(zip(keys, args[:len(keys)]))
            inputs = args[len(keys):len(keys) + num_inputs]
            output = torch.func.functional_call(model, state, inputs)
            return loss_fn(output, args[len(keys) + num_inputs])

    return Wrapper()


def _torch_mlir_loss(model, inputs, target, loss_fn):
    """torch-mlir's linalg-on-tensors text of @loss and the keys of its
    arguments (parameters, buffers)."""
    import torch
    import torch._decomp
    from torch_mlir import fx
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    param_keys = [k for k, _ in model.named_parameters()]
    buffer_keys = [k for k, _ in model.named_buffers()]
    tensors = dict(model.named_parameters())
    tensors.update(dict(model.named_buffers()))
    args = tuple(tensors[k].detach().clone() for k in param_keys + buffer_keys)
    args += tuple(inputs) + (target,)
    wrapper = _params_as_args(model, loss_fn, param_keys + buffer_keys,
                              len(inputs))
    # torch-mlir's decompositions, and PyTorch's own for gelu: torch-mlir
    # 20261001 lowers gelu(approximate="tanh") itself with sqrt(2/pi) written
    # as 0.797724 (exactly 0.7978846), which puts its gradients 1e-4 off.
    decompositions = dict(get_decomposition_table())
    decompositions.update(torch._decomp.get_decompositions(
        [torch.ops.aten.gelu]))
    try:
        program = torch.export.export(wrapper, args, strict=False)
        program = program.run_decompositions(decompositions)
    except Exception as error:  # torch's own message names the cause
        raise ExportError(f"torch.export cannot export the model: {error}") \
            from error
    # Buffers the forward updates (BatchNorm's running statistics in
    # training mode) come back as results before the loss, in the order of
    # their arguments: they become state the step carries.
    input_names = [spec.arg.name for spec in program.graph_signature.input_specs]
    keys = param_keys + buffer_keys
    mutated = [keys[input_names.index(spec.target)]
               for spec in program.graph_signature.output_specs
               if spec.kind == torch.export.graph_signature.OutputKind
               .USER_INPUT_MUTATION]
    if mutated != sorted(mutated, key=keys.index):
        raise ExportError("the model updates its buffers in another order "
                          "than it declares them (" + ", ".join(mutated) +
                          "): recast's step returns state in argument order")
    try:
        module = fx.export_and_import(program, output_type="linalg-on-tensors",
                                      func_name="loss", decomposition_table={})
    except Exception as error:
        raise ExportError(f"torch-mlir cannot import the model: {error}") \
            from error
    _check_supported_ops(module)
    text = module.operation.get_asm(enable_debug_info=False)
    return text, param_keys, buffer_keys, mutated, args


# The dialects of torch-mlir's linalg-on-tensors output that recast reads.
# Others (tm_tensor's scan, sort and scatter, left by cumsum, sort, index_put)
# would only fail later as an unregistered dialect, far from the model.
_SUPPORTED_DIALECTS = {"builtin", "func", "linalg", "tensor", "arith", "math",
                       "cf", "scf", "bufferization", "complex", "ml_program"}


def _check_supported_ops(module):
    """Raises ExportError naming the first op outside _SUPPORTED_DIALECTS and
    the model's source line torch-mlir recorded for it."""
    def visit(operation):
        name = operation.name
        if name.split(".", 1)[0] not in _SUPPORTED_DIALECTS:
            location = str(operation.location)
            found = re.search(r'"([^"]+)":(\d+)', location)
            where = (f" (from {found.group(1)}:{found.group(2)})" if found
                     else f" ({location})")
            raise ExportError(f"recast cannot train '{name}', which torch-mlir "
                              f"emitted for the model{where}; rewrite that "
                              "part of the model with ops torch-mlir lowers "
                              "to linalg")
        for region in operation.regions:
            for block in region.blocks:
                for nested in block.operations:
                    visit(nested.operation)
    visit(module.operation)


_ARG = re.compile(r"%arg(\d+)\b")


def _mark_loss_arguments(text: str, attributes: Sequence[str]) -> str:
    """@loss private, its arguments given the attributes (`recast.param`,
    `recast.init = "..."`; empty: none)."""
    match = re.search(r"func\.func @loss\(", text)
    if not match:
        raise ExportError("torch-mlir's output has no func.func @loss")
    start = match.end()
    depth, end = 1, start
    while depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    signature = text[start:end - 1]
    parts, depth, current = [], 0, ""
    for ch in signature:  # split at top-level commas
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    marked = []
    for part, attribute in zip(parts, attributes):
        part = part.strip()
        if attribute:
            if part.endswith("}"):
                part = part[:-1] + ", " + attribute + "}"
            else:
                part += " {" + attribute + "}"
        marked.append(part)
    return (text[:match.start()] + "func.func private @loss(" +
            ", ".join(marked) + ")" + text[end:])


def _rename_step_arguments(text: str, names: Sequence[str]) -> str:
    """Gives @train_step's block arguments their names."""
    start = text.index("func.func @train_step(")
    end = text.find("\n  func.func", start + 1)
    end = len(text) if end < 0 else end
    body = _ARG.sub(lambda m: "%" + names[int(m.group(1))], text[start:end])
    return text[:start] + body + text[end:]


def export_step(model, inputs: Sequence, target, loss_fn: Callable, *,
                optimizer: str = "sgd", lr: float = 0.01,
                weight_decay: float = 0.0, momentum: float = 0.9,
                betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                input_names: Optional[Sequence[str]] = None,
                target_name: str = "target") -> TorchStep:
    """Exports `loss_fn(model(*inputs), target)` through torch-mlir and builds
    recast's training step with `optimizer` (sgd, momentum or adamw, with
    PyTorch's definitions of lr, weight_decay, momentum, betas, eps).
    The parameters are {recast.param} arguments named after their
    state_dict keys, the optimizer state and the buffers the forward updates
    (BatchNorm's running statistics in training mode) {recast.state}
    arguments, the other buffers, the inputs and the target the batch. Raises
    ExportError when torch.export or torch-mlir cannot export the model, and
    recast.RecastError when recast cannot build the step."""
    import torch
    from .api import parse

    if optimizer not in _OPTIMIZER_STATE:
        raise ValueError(f"unknown optimizer '{optimizer}' (expected sgd, "
                         "momentum or adamw)")
    inputs = tuple(inputs)
    input_names = list(input_names) if input_names else (
        ["input"] if len(inputs) == 1 else [f"input{i}" for i in
                                            range(len(inputs))])
    if len(input_names) != len(inputs):
        raise ValueError("one input name per input")
    text, param_keys, buffer_keys, state_keys, args = _torch_mlir_loss(
        model, inputs, target, loss_fn)
    keys = param_keys + buffer_keys
    # Parameters are {recast.param}; integer batch values (labels, token
    # ids) draw synthetic values below the example's largest + 1, so that
    # recast-run can train the step without data.
    attributes = []
    for i, value in enumerate(args):
        if i < len(param_keys):
            attributes.append("recast.param")
        elif i < len(keys) and keys[i] in state_keys:
            attributes.append("recast.state")
        elif not value.dtype.is_floating_point and value.dtype != torch.bool \
                and value.numel() > 0:
            attributes.append(
                f'recast.init = "index:{int(value.max().item()) + 1}"')
        else:
            attributes.append("")
    text = _mark_loss_arguments(text, attributes)

    options = {"sgd": f"optimizer=sgd lr={lr} weight-decay={weight_decay}",
               "momentum": f"optimizer=momentum lr={lr} "
                           f"weight-decay={weight_decay} momentum={momentum}",
               "adamw": f"optimizer=adamw lr={lr} weight-decay={weight_decay} "
                        f"beta1={betas[0]} beta2={betas[1]} eps={eps}"}
    module = parse(text, "loss.mlir")
    module.run(f"recast-train-step{{{options[optimizer]}}}")

    # The step's arguments: parameters, optimizer state, then the loss's
    # other arguments (buffers, inputs, target) in order.
    arguments: List[StepArgument] = []
    used = set()

    def unique(name):
        name = _sanitize(name)
        while name in used:
            name += "_"
        used.add(name)
        return name

    shapes = [tuple(a.shape) for a in args]
    dtypes = [str(np.dtype(str(a.dtype).replace("torch.", "")))
              for a in args]
    for i, key in enumerate(param_keys):
        arguments.append(StepArgument(unique(key), key, "param", shapes[i],
                                      dtypes[i]))
    state_names = list(_OPTIMIZER_STATE[optimizer])
    for suffix in state_names:
        for i, key in enumerate(param_keys):
            arguments.append(StepArgument(unique(f"{key}.{suffix}"),
                                          f"{key}.{suffix}", "state",
                                          shapes[i], "float32"))
    if optimizer == "adamw":
        arguments.append(StepArgument(unique("step"), "step", "state", (),
                                      "float32"))
    # Then the model's state, then the batch: the loss's other arguments in
    # order.
    for key in state_keys:
        i = keys.index(key)
        arguments.append(StepArgument(unique(key), key, "model_state",
                                      shapes[i], dtypes[i]))
    batch_keys = [k for k in buffer_keys if k not in state_keys] + \
        input_names + [target_name]
    all_keys = keys + input_names + [target_name]
    for key in batch_keys:
        i = all_keys.index(key)
        arguments.append(StepArgument(unique(key), key, "batch", shapes[i],
                                      dtypes[i]))
    text = _rename_step_arguments(str(module), [a.name for a in arguments])
    return TorchStep(text, arguments, input_names, target_name)


def _parse_tensor_spec(spec: str):
    """`8,784` (float32 normal), `8:int64:10` (integers below 10)."""
    import torch
    shape_text, *rest = spec.split(":")
    shape = tuple(int(s) for s in shape_text.split(",") if s)
    dtype = rest[0] if rest else "float32"
    if dtype.startswith("int"):
        high = int(rest[1]) if len(rest) > 1 else 2
        return torch.randint(0, high, shape, dtype=getattr(torch, dtype))
    return torch.randn(shape, dtype=getattr(torch, dtype))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m recast.torch",
        description="Export a PyTorch model's training step through "
                    "torch-mlir into a recast .mlir file.")
    parser.add_argument("factory", help="module:function returning the "
                        "nn.Module (module importable from the current "
                        "directory)")
    parser.add_argument("--input", action="append", required=True,
                        help="an example input: shape[:dtype[:high]], e.g. "
                        "8,784 or 2,16:int64:50257 (repeat for several)")
    parser.add_argument("--target", required=True,
                        help="the example target, same form")
    parser.add_argument("--loss", default="cross_entropy",
                        help="a torch.nn.functional loss taking (output, "
                        "target): cross_entropy, mse_loss, nll_loss, ...")
    parser.add_argument("--optimizer", default="sgd",
                        choices=sorted(_OPTIMIZER_STATE))
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", required=True)
    options = parser.parse_args(argv)

    import torch
    import torch.nn.functional as F
    sys.path.insert(0, "")
    module_name, _, function = options.factory.partition(":")
    if not function:
        parser.error("factory must be module:function")
    torch.manual_seed(options.seed)
    model = getattr(importlib.import_module(module_name), function)()
    loss_fn = getattr(F, options.loss, None)
    if loss_fn is None:
        parser.error(f"torch.nn.functional has no loss '{options.loss}'")
    inputs = [_parse_tensor_spec(s) for s in options.input]
    target = _parse_tensor_spec(options.target)
    try:
        step = export_step(model, inputs, target, loss_fn,
                           optimizer=options.optimizer, lr=options.lr,
                           weight_decay=options.weight_decay)
    except ExportError as error:
        print(f"recast.torch: error: {error}", file=sys.stderr)
        return 1
    step.write(options.output)
    for arg in step.arguments:
        print(f"%{arg.name}: {arg.role} {arg.key} {list(arg.shape)} {arg.dtype}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
