"""Import a torch.fx graph into recast's input IR (a training step).

    import torch, recast
    from recast.torch_import import import_module
    imported = import_module(model, {"x": (32, 64)}, loss="mse",
                             target_shape=(32, 10), lr=0.1)
    program = recast.compile(imported.text)
    loss, new = program.step(imported.params_for_recast(), {"x": x, "target": y})

The model is traced with torch.fx.symbolic_trace. The importer walks the
graph and rebuilds it with recast.builder, so the forward uses only the op
set --recast-autodiff takes; the loss (mse, or cross_entropy against one-hot
targets) is appended and @train_step applies SGD with `lr`.

Supported: nn.Linear (on inputs of any rank >= 2), nn.LayerNorm, nn.ReLU/GELU/Tanh/Sigmoid/Softmax,
nn.Identity and nn.Dropout (as identity: training steps are compared
deterministically), and as functions or methods relu, gelu (tanh or erf),
tanh, sigmoid, softmax over the last dim, matmul/@, linear, layer_norm,
transpose/t/permute of two dims, +, -, * and / with tensors of the same shape
or Python numbers, and parameters read with get_attr. Anything else raises
UnsupportedError naming the node.

Parameter layouts: nn.Linear's weight [out, in] becomes a recast parameter
[in, out] (x @ w), so `params_for_recast` transposes it and `grads_to_torch`
transposes gradients back.

The translation is written against a neutral node form (op, target, args),
so that the core can be tested without PyTorch: `import_graph` takes such
nodes, and `import_module` maps torch's onto it.
"""

import operator
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .builder import Model, _sanitize


class UnsupportedError(ValueError):
    """A node the importer cannot translate."""


@dataclass
class Node:
    """A graph node in neutral form.

    op: "input" (target: the input's name), "param" (target: the parameter's
    name), "call" (target: a canonical op name, see OPS), "output".
    args: Node references or constants; kwargs: constants."""
    name: str
    op: str
    target: str
    args: Tuple[Any, ...] = ()
    kwargs: Dict[str, Any] = field(default_factory=dict)


OPS = ("linear", "layer_norm", "relu", "gelu", "tanh", "sigmoid", "softmax",
       "matmul", "transpose", "add", "sub", "mul", "div", "identity")


@dataclass
class Imported:
    """The imported training step: `text` (MLIR), its parameters' names in
    recast and in torch (and whether the layout is transposed), and the
    batch arguments' names."""
    text: str
    params: List[Tuple[str, str, bool]]  # (recast name, torch name, transposed)
    batch: List[str]

    def params_for_recast(self, state: Dict[str, Any]) -> Dict[str, np.ndarray]:
        """Torch parameters (a state dict, tensors or arrays) in recast's
        names and layouts."""
        out = {}
        for name, torch_name, transposed in self.params:
            value = _to_numpy(state[torch_name])
            out[name] = np.ascontiguousarray(value.T if transposed else value)
        return out

    def grads_to_torch(self, grads: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """recast gradients (by recast name) in torch's names and layouts."""
        return {torch_name: (grads[name].T if transposed else grads[name])
                for name, torch_name, transposed in self.params}


def _to_numpy(value):
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float32)


def import_graph(nodes: Sequence[Node], inputs: Dict[str, Tuple[int, ...]],
                 param_shapes: Dict[str, Tuple[int, ...]], *, loss: str = "mse",
                 target_shape: Optional[Tuple[int, ...]] = None, lr: float = 0.1,
                 name: str = "imported") -> Imported:
    """Translates neutral nodes into a training step. `param_shapes` holds
    the torch shapes of the parameters that nodes name; `inputs` the shapes
    of the inputs. The output node's single value is the model's output."""
    model = Model(name)
    f = model.loss
    values: Dict[str, Any] = {}
    params: Dict[str, Any] = {}
    param_list: List[Tuple[str, str, bool]] = []
    # Parameter roles: a linear's weight is stored transposed.
    transposed = set()
    for node in nodes:
        if node.op == "call" and node.target == "linear":
            w = node.args[1]
            if isinstance(w, Node) and w.op == "param":
                transposed.add(w.target)

    def param(torch_name):
        if torch_name not in params:
            if torch_name not in param_shapes:
                raise UnsupportedError(f"unknown parameter '{torch_name}'")
            shape = tuple(param_shapes[torch_name])
            is_t = torch_name in transposed
            if is_t:
                if len(shape) != 2:
                    raise UnsupportedError(f"linear weight '{torch_name}' must be 2-d")
                shape = (shape[1], shape[0])
            recast_name = _sanitize(torch_name)
            # Recast's own initializers are unused: values come from torch.
            params[torch_name] = model.param(recast_name, shape, init="zeros")
            param_list.append((recast_name, torch_name, is_t))
        return params[torch_name]

    def value(arg, node):
        if isinstance(arg, Node):
            if arg.op == "param":
                return param(arg.target)
            if arg.name not in values:
                raise UnsupportedError(f"node '{node.name}' uses '{arg.name}' before it is defined")
            return values[arg.name]
        return arg

    batch = []
    for name_, shape in inputs.items():
        values[name_] = model.input(_sanitize(name_), tuple(shape))
        batch.append(_sanitize(name_))
    output = None
    for node in nodes:
        if node.op == "input":
            if node.target not in inputs:
                known = ", ".join(n.target for n in nodes if n.op == "input")
                raise UnsupportedError(
                    f"input '{node.target}' has no shape (the module's inputs "
                    f"are: {known}; shapes were given for: "
                    f"{', '.join(inputs) or 'none'})")
            values[node.name] = values[node.target]
        elif node.op == "param":
            values[node.name] = param(node.target)
        elif node.op == "output":
            output = value(node.args[0], node)
        elif node.op == "call":
            args = [value(a, node) for a in node.args]
            values[node.name] = _call(f, node, args)
        else:
            raise UnsupportedError(f"node '{node.name}': op '{node.op}'")
    if output is None:
        raise UnsupportedError("the graph has no output")
    target_shape = tuple(target_shape or output.shape)
    if target_shape != output.shape:
        raise UnsupportedError(f"the output has shape {output.shape}, the target {target_shape}")
    if loss == "mse":
        target = model.input("target", target_shape)
        model.set_loss(f.mse(output, target))
    elif loss == "cross_entropy":
        if len(target_shape) != 2:
            raise UnsupportedError("cross_entropy needs 2-d logits [N, C]")
        target = model.input("target", target_shape, init="onehot")
        model.set_loss(f.cross_entropy(output, target))
    else:
        raise ValueError("loss must be 'mse' or 'cross_entropy'")
    batch.append("target")
    return Imported(model.render_train_step(lr=lr), param_list, batch)


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _call(f, node: Node, args):
    op = node.target
    kw = node.kwargs
    if op == "identity":
        return args[0]
    if op == "linear":
        x, w = args[0], args[1]
        b = args[2] if len(args) > 2 else kw.get("bias")
        if x.rank == 2:
            return f.linear(x, w, b)
        if x.rank < 2:
            raise UnsupportedError(f"node '{node.name}': linear of a {x.rank}-d input")
        # [..., K] -> [N, K] -> linear -> [..., M]: reshapes are views.
        lead = tuple(range(x.rank - 1))
        flat = f.collapse_shape(x, [list(lead), [x.rank - 1]])
        y = f.linear(flat, w, b)
        return f.expand_shape(y, [list(lead), [x.rank - 1]],
                              x.shape[:-1] + (y.shape[-1],))
    if op == "layer_norm":
        x, gamma, beta = args[0], args[1], args[2]
        return f.layer_norm(x, gamma, beta, eps=kw.get("eps", 1e-5))
    if op in ("relu", "tanh", "sigmoid"):
        return getattr(f, op)(args[0])
    if op == "gelu":
        approximate = kw.get("approximate", "none")
        return f.gelu(args[0], approximate="tanh" if approximate == "tanh" else "erf")
    if op == "softmax":
        dim = kw.get("dim", args[1] if len(args) > 1 else -1)
        x = args[0]
        if dim not in (-1, x.rank - 1):
            raise UnsupportedError(f"node '{node.name}': softmax over dim {dim}, only the last")
        return f.softmax(x)
    if op == "matmul":
        a, b = args
        if a.rank == 2 and b.rank == 2:
            return f.matmul(a, b)
        if a.rank == 3 and b.rank == 3:
            return f.batch_matmul(a, b)
        raise UnsupportedError(f"node '{node.name}': matmul of ranks {a.rank} and {b.rank}")
    if op == "transpose":
        x, d0, d1 = args[0], args[1], args[2]
        perm = list(range(x.rank))
        d0, d1 = d0 % x.rank, d1 % x.rank
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return f.transpose(x, tuple(perm))
    if op in ("add", "sub", "mul", "div"):
        a, b = args
        if _is_number(a) and _is_number(b):
            raise UnsupportedError(f"node '{node.name}': arithmetic on two numbers")
        if _is_number(b) or _is_number(a):
            x, c = (a, b) if _is_number(b) else (b, a)
            if op == "mul":
                return f.scale(x, float(c))
            if op == "div" and x is a:
                return f.scale(x, 1.0 / float(c))
            if op == "add":
                return f.ew(lambda s, v: s.addf(v, float(c)), x, name="addc")
            if op == "sub" and x is a:
                return f.ew(lambda s, v: s.subf(v, float(c)), x, name="subc")
            raise UnsupportedError(f"node '{node.name}': a number {op} a tensor")
        if a.shape != b.shape:
            # A bias-like operand broadcast along the leading dims.
            if b.rank == 1 and a.shape[-1:] == b.shape and op == "add":
                return f.add_bias(a, b)
            raise UnsupportedError(
                f"node '{node.name}': {op} of shapes {a.shape} and {b.shape}")
        if op == "div":
            return f.div(a, b)
        return getattr(f, op)(a, b)
    raise UnsupportedError(f"node '{node.name}': unsupported op '{op}'")


# ---------------------------------------------------------------------------
# torch.fx
# ---------------------------------------------------------------------------

def _torch_tables():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    functions = {
        F.relu: "relu", torch.relu: "relu", F.gelu: "gelu", torch.tanh: "tanh",
        F.tanh: "tanh", torch.sigmoid: "sigmoid", F.sigmoid: "sigmoid",
        F.softmax: "softmax", torch.softmax: "softmax", torch.matmul: "matmul",
        operator.matmul: "matmul", F.linear: "linear", F.layer_norm: "layer_norm",
        torch.transpose: "transpose", operator.add: "add", torch.add: "add",
        operator.sub: "sub", torch.sub: "sub", operator.mul: "mul",
        torch.mul: "mul", operator.truediv: "div", torch.div: "div",
        F.dropout: "identity",
    }
    methods = {
        "relu": "relu", "tanh": "tanh", "sigmoid": "sigmoid",
        "softmax": "softmax", "matmul": "matmul", "transpose": "transpose",
        "t": "t", "permute": "permute", "add": "add", "sub": "sub",
        "mul": "mul", "div": "div", "contiguous": "identity",
    }
    modules = {
        nn.Linear: "linear", nn.LayerNorm: "layer_norm", nn.ReLU: "relu",
        nn.GELU: "gelu", nn.Tanh: "tanh", nn.Sigmoid: "sigmoid",
        nn.Softmax: "softmax", nn.Identity: "identity", nn.Dropout: "identity",
    }
    return functions, methods, modules


def fx_to_nodes(graph_module) -> Tuple[List[Node], Dict[str, Tuple[int, ...]], Dict[str, Any]]:
    """Neutral nodes of a torch.fx GraphModule, the torch shapes of the
    parameters they use, and the parameters' values (a state dict)."""
    functions, methods, module_ops = _torch_tables()
    state = dict(graph_module.named_parameters())
    submodules = dict(graph_module.named_modules())
    nodes: List[Node] = []
    by_name: Dict[str, Node] = {}

    def ref(arg):
        if hasattr(arg, "op") and hasattr(arg, "name") and arg.name in by_name:
            return by_name[arg.name]
        if isinstance(arg, (list, tuple)):
            return type(arg)(ref(a) for a in arg)
        return arg

    def add(node):
        nodes.append(node)
        by_name[node.name] = node

    for fx in graph_module.graph.nodes:
        args = tuple(ref(a) for a in fx.args)
        kwargs = {k: ref(v) for k, v in fx.kwargs.items()}
        if fx.op == "placeholder":
            add(Node(fx.name, "input", fx.target))
        elif fx.op == "get_attr":
            if fx.target not in state:
                raise UnsupportedError(f"get_attr '{fx.target}' is not a parameter")
            add(Node(fx.name, "param", fx.target))
        elif fx.op == "output":
            add(Node(fx.name, "output", "output", (args[0],)))
        elif fx.op == "call_module":
            module = submodules[fx.target]
            op = module_ops.get(type(module))
            if op is None:
                raise UnsupportedError(f"node '{fx.name}': module {type(module).__name__}")
            prefix = fx.target + "."
            if op == "linear":
                w = Node(fx.name + "_weight", "param", prefix + "weight")
                extra = [w] + ([Node(fx.name + "_bias", "param", prefix + "bias")]
                               if module.bias is not None else [])
                add(Node(fx.name, "call", "linear", args + tuple(extra)))
            elif op == "layer_norm":
                if module.weight is None or module.bias is None:
                    raise UnsupportedError(f"node '{fx.name}': LayerNorm without affine parameters")
                if len(module.normalized_shape) != 1:
                    raise UnsupportedError(f"node '{fx.name}': LayerNorm over more than the last dim")
                add(Node(fx.name, "call", "layer_norm",
                         args + (Node(fx.name + "_w", "param", prefix + "weight"),
                                 Node(fx.name + "_b", "param", prefix + "bias")),
                         {"eps": module.eps}))
            elif op == "gelu":
                add(Node(fx.name, "call", "gelu", args, {"approximate": module.approximate}))
            elif op == "softmax":
                add(Node(fx.name, "call", "softmax", args, {"dim": module.dim}))
            else:
                add(Node(fx.name, "call", op, args))
        elif fx.op in ("call_function", "call_method"):
            table = functions if fx.op == "call_function" else methods
            op = table.get(fx.target)
            if op is None:
                raise UnsupportedError(f"node '{fx.name}': {fx.op} {fx.target}")
            if op == "t":
                op, args = "transpose", (args[0], 0, 1)
            elif op == "permute":
                dims = args[1:] if len(args) > 2 else args[1]
                moved = [i for i, d in enumerate(dims) if i != d]
                if len(moved) != 2:
                    raise UnsupportedError(f"node '{fx.name}': permute of more than two dims")
                op, args = "transpose", (args[0], moved[0], moved[1])
            elif op == "layer_norm":
                # F.layer_norm(x, normalized_shape, weight, bias, eps)
                x, _, w, b = args[:4]
                eps = kwargs.pop("eps", args[4] if len(args) > 4 else 1e-5)
                args, kwargs = (x, w, b), {"eps": eps}
            elif op == "identity":
                args = args[:1]
            add(Node(fx.name, "call", op, args, kwargs))
        else:
            raise UnsupportedError(f"node '{fx.name}': op {fx.op}")
    shapes = {n: tuple(p.shape) for n, p in state.items()}
    return nodes, shapes, state


def import_module(module, inputs: Dict[str, Tuple[int, ...]], **kwargs) -> Imported:
    """Traces `module` with torch.fx and imports it (see import_graph for
    the keyword arguments). `inputs` maps forward()'s argument names to
    shapes."""
    import torch.fx
    graph_module = module if isinstance(module, torch.fx.GraphModule) \
        else torch.fx.symbolic_trace(module)
    nodes, shapes, _ = fx_to_nodes(graph_module)
    kwargs.setdefault("name", type(module).__name__.lower())
    return import_graph(nodes, inputs, shapes, **kwargs)
