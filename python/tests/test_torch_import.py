"""The torch.fx importer: its core on neutral nodes (no PyTorch needed)
against numpy, and on real torch modules against PyTorch's own forward and
gradients where PyTorch is installed."""

import numpy as np
import pytest

import recast
from recast.torch_import import Node, UnsupportedError, import_graph

LR = 0.5


def step_grads(imported, params, batch):
    """(loss, gradients) from one SGD step of the imported program."""
    program = recast.compile(imported.text, opt_level=0)
    loss, new = program.step(params, batch)
    return loss, {k: (params[k] - new[k]) / LR for k in params}


def test_mlp_nodes_match_numpy():
    rng = np.random.default_rng(0)
    torch_params = {  # torch layouts: Linear weight [out, in]
        "fc1.weight": rng.standard_normal((5, 6)).astype(np.float32),
        "fc1.bias": rng.standard_normal(5).astype(np.float32),
        "fc2.weight": rng.standard_normal((3, 5)).astype(np.float32),
        "fc2.bias": rng.standard_normal(3).astype(np.float32),
    }
    x = Node("x", "input", "x")
    p = {k: Node(k.replace(".", "_"), "param", k) for k in torch_params}
    h = Node("fc1", "call", "linear", (x, p["fc1.weight"], p["fc1.bias"]))
    a = Node("act", "call", "tanh", (h,))
    y = Node("fc2", "call", "linear", (a, p["fc2.weight"], p["fc2.bias"]))
    s = Node("half", "call", "mul", (y, 0.5))
    nodes = [x, h, a, y, s, Node("output", "output", "output", (s,))]
    imported = import_graph(nodes, {"x": (8, 6)},
                            {k: v.shape for k, v in torch_params.items()},
                            loss="mse", lr=LR)
    assert [n for n, _, _ in imported.params] == ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    xv = rng.standard_normal((8, 6)).astype(np.float32)
    target = rng.standard_normal((8, 3)).astype(np.float32)
    params = imported.params_for_recast(torch_params)
    assert params["fc1_weight"].shape == (6, 5)
    loss, grads = step_grads(imported, params, {"x": xv, "target": target})

    # numpy forward and backward, float64.
    w1, b1 = torch_params["fc1.weight"].astype(np.float64), torch_params["fc1.bias"]
    w2, b2 = torch_params["fc2.weight"].astype(np.float64), torch_params["fc2.bias"]
    hv = xv @ w1.T + b1
    av = np.tanh(hv)
    yv = 0.5 * (av @ w2.T + b2)
    diff = yv - target
    assert loss == pytest.approx(np.mean(diff ** 2), rel=1e-5)
    dy = 2 * diff / diff.size * 0.5
    want = {"fc2.weight": dy.T @ av, "fc2.bias": dy.sum(0)}
    dh = (dy @ w2) * (1 - av ** 2)
    want.update({"fc1.weight": dh.T @ xv, "fc1.bias": dh.sum(0)})
    got = imported.grads_to_torch(grads)
    for k, v in want.items():
        np.testing.assert_allclose(got[k], v, rtol=2e-3, atol=2e-5, err_msg=k)


def test_unsupported_nodes_are_named():
    x = Node("x", "input", "x")
    bad = Node("conv", "call", "conv3d", (x,))
    with pytest.raises(UnsupportedError, match="node 'conv': unsupported op 'conv3d'"):
        import_graph([x, bad, Node("out", "output", "output", (bad,))],
                     {"x": (2, 2)}, {})
    with pytest.raises(UnsupportedError, match="softmax over dim 0"):
        sm = Node("sm", "call", "softmax", (x,), {"dim": 0})
        import_graph([x, sm, Node("out", "output", "output", (sm,))], {"x": (2, 2)}, {})


def test_inputs_and_parameters_named_as_torch_names_them():
    # nn.Sequential calls its argument `input` and its parameters "0.weight":
    # a name that starts with a digit is made a valid SSA name, and an input
    # without a shape names the module's inputs.
    x = Node("input_1", "input", "input")
    w = Node("w", "param", "0.weight")
    b = Node("b", "param", "0.bias")
    y = Node("fc", "call", "linear", (x, w, b))
    nodes = [x, w, b, y, Node("output", "output", "output", (y,))]
    shapes = {"0.weight": (3, 4), "0.bias": (3,)}
    imported = import_graph(nodes, {"input": (2, 4)}, shapes)
    assert "%v0_weight" in imported.text
    with pytest.raises(UnsupportedError,
                       match="input 'input' has no shape \\(the module's inputs are: "
                             "input; shapes were given for: x\\)"):
        import_graph(nodes, {"x": (2, 4)}, shapes)


def test_transformer_block_nodes_match_numpy_forward():
    """Layer norm, attention (matmul, transpose, scale, softmax), GELU and
    residual adds: the imported loss equals a numpy forward, and one step
    lowers it."""
    rng = np.random.default_rng(1)
    d, t = 8, 4
    shapes = {"ln.weight": (d,), "ln.bias": (d,), "q.weight": (d, d),
              "k.weight": (d, d), "fc.weight": (d, d), "fc.bias": (d,)}
    torch_params = {k: (rng.standard_normal(s) * 0.5).astype(np.float32)
                    for k, s in shapes.items()}
    x = Node("x", "input", "x")
    p = {k: Node(k.replace(".", "_"), "param", k) for k in shapes}
    h = Node("ln", "call", "layer_norm", (x, p["ln.weight"], p["ln.bias"]), {"eps": 1e-5})
    q = Node("q", "call", "linear", (h, p["q.weight"]))
    k = Node("k", "call", "linear", (h, p["k.weight"]))
    kt = Node("kt", "call", "transpose", (k, 0, 1))
    s = Node("s", "call", "matmul", (q, kt))
    ss = Node("ss", "call", "div", (s, d ** 0.5))
    a = Node("a", "call", "softmax", (ss,), {"dim": -1})
    av = Node("av", "call", "matmul", (a, h))
    r = Node("r", "call", "add", (x, av))
    f = Node("f", "call", "linear", (r, p["fc.weight"], p["fc.bias"]))
    g = Node("g", "call", "gelu", (f,), {"approximate": "tanh"})
    out = Node("out", "call", "add", (r, g))
    nodes = [x, h, q, k, kt, s, ss, a, av, r, f, g, out,
             Node("output", "output", "output", (out,))]
    imported = import_graph(nodes, {"x": (t, d)}, shapes, loss="mse", lr=0.05)
    xv = rng.standard_normal((t, d)).astype(np.float32)
    target = rng.standard_normal((t, d)).astype(np.float32)

    P = {k_: v.astype(np.float64) for k_, v in torch_params.items()}
    mu = xv.mean(1, keepdims=True)
    var = ((xv - mu) ** 2).mean(1, keepdims=True)
    hv = (xv - mu) / np.sqrt(var + 1e-5) * P["ln.weight"] + P["ln.bias"]
    sv = (hv @ P["q.weight"].T) @ (hv @ P["k.weight"].T).T / d ** 0.5
    e = np.exp(sv - sv.max(1, keepdims=True))
    rv = xv + (e / e.sum(1, keepdims=True)) @ hv
    fv = rv @ P["fc.weight"].T + P["fc.bias"]
    gv = 0.5 * fv * (1 + np.tanh(np.sqrt(2 / np.pi) * (fv + 0.044715 * fv ** 3)))
    want = np.mean((rv + gv - target) ** 2)

    program = recast.compile(imported.text, opt_level=0)
    params = imported.params_for_recast(torch_params)
    batch = {"x": xv, "target": target}
    loss, new = program.step(params, batch)
    assert loss == pytest.approx(want, rel=1e-4)
    loss2, _ = program.step(new, batch)
    assert loss2 < loss


def test_batched_linear_and_attention_nodes():
    """[B, T, D] activations: linear through reshapes, batched matmul with a
    transposed operand; the loss equals numpy's."""
    rng = np.random.default_rng(2)
    b, t, d = 2, 3, 4
    shapes = {"w.weight": (d, d), "w.bias": (d,)}
    torch_params = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    x = Node("x", "input", "x")
    y = Node("y", "call", "linear", (x, Node("w_weight", "param", "w.weight"),
                                     Node("w_bias", "param", "w.bias")))
    yt = Node("yt", "call", "transpose", (y, -2, -1))
    s_ = Node("s", "call", "matmul", (y, yt))
    a = Node("a", "call", "softmax", (s_,), {"dim": -1})
    o = Node("o", "call", "matmul", (a, x))
    nodes = [x, y, yt, s_, a, o, Node("output", "output", "output", (o,))]
    imported = import_graph(nodes, {"x": (b, t, d)}, shapes, loss="mse", lr=0.1)
    xv = rng.standard_normal((b, t, d)).astype(np.float32)
    target = rng.standard_normal((b, t, d)).astype(np.float32)
    yv = xv.astype(np.float64) @ torch_params["w.weight"].T + torch_params["w.bias"]
    sv = yv @ yv.transpose(0, 2, 1)
    e = np.exp(sv - sv.max(-1, keepdims=True))
    want = np.mean(((e / e.sum(-1, keepdims=True)) @ xv - target) ** 2)
    program = recast.compile(imported.text, opt_level=0)
    loss, _ = program.step(imported.params_for_recast(torch_params),
                           {"x": xv, "target": target})
    assert loss == pytest.approx(want, rel=1e-4)
