"""An independent numpy implementation of the zoo's GPT-2-style decoder.

Forward and a hand-written reverse-mode backward of the model that
python/recast/zoo.py generates as examples/models/gpt-<config>.mlir:

    tokens [B, T+1] int; inputs = tokens[:, :T], labels = tokens[:, 1:]
    h = wte[inputs] + wpe                                  (rows b*T + t)
    per layer l (pre-LN):
      a = LN(h; ln1)          q, k, v = split(a @ attn_qkv_w + attn_qkv_b) into H heads
      s = (q k^T) / sqrt(D/H) where key <= query, else -1e4;  p = softmax(s)
      h = h + merge_heads(p v) @ attn_proj_w + attn_proj_b
      m = LN(h; ln2)
      h = h + gelu_tanh(m @ mlp_fc_w + mlp_fc_b) @ mlp_proj_w + mlp_proj_b
    logits = LN(h; ln_f) @ wte^T
    loss = mean over rows of (logsumexp(logits) - logits[label])

LN is x_hat * g + b with the biased variance and eps 1e-5. The arithmetic runs
in the dtype of the parameters (float64 for the gradient check below, where the
finite differences need it).

Run directly, it checks its backward against central finite differences in
float64 on a small configuration.
"""

# RUN: %python %s

import math
import sys
from collections import OrderedDict

import numpy as np

EPS = 1e-5
MASK_VALUE = -1e4
GELU_C = math.sqrt(2.0 / math.pi)

LAYER_PARAMS = ("ln1_g", "ln1_b", "attn_qkv_w", "attn_qkv_b", "attn_proj_w", "attn_proj_b",
                "ln2_g", "ln2_b", "mlp_fc_w", "mlp_fc_b", "mlp_proj_w", "mlp_proj_b")

# The zoo's configurations (python/recast/zoo.py).
CONFIGS = {
    "tiny": dict(batch=2, seq=32, vocab=128, layers=2, d_model=64, heads=4),
    "gpt2-small": dict(batch=1, seq=1024, vocab=50257, layers=12, d_model=768, heads=12),
}


def param_shapes(seq, vocab, layers, d_model, **_):
    """Parameter names and shapes in the order of @train_step's signature."""
    d = d_model
    shapes = OrderedDict([("wte", (vocab, d)), ("wpe", (seq, d))])
    per_layer = {"ln1_g": (d,), "ln1_b": (d,), "attn_qkv_w": (d, 3 * d), "attn_qkv_b": (3 * d,),
                 "attn_proj_w": (d, d), "attn_proj_b": (d,), "ln2_g": (d,), "ln2_b": (d,),
                 "mlp_fc_w": (d, 4 * d), "mlp_fc_b": (4 * d,), "mlp_proj_w": (4 * d, d),
                 "mlp_proj_b": (d,)}
    for layer in range(layers):
        for name in LAYER_PARAMS:
            shapes["h%d_%s" % (layer, name)] = per_layer[name]
    shapes["ln_f_g"] = (d,)
    shapes["ln_f_b"] = (d,)
    return shapes


def init_kinds(shapes):
    """recast.init of each parameter: "ones" for layer-norm gains, else the default."""
    return OrderedDict((name, "ones" if name.endswith("_g") else None) for name in shapes)


# ----------------------------------------------------------------------------
# Pieces with their backward
# ----------------------------------------------------------------------------

def layer_norm(x, g, b):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    rstd = 1.0 / np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + EPS)
    xhat = centered * rstd
    return xhat * g + b, (xhat, rstd, g)


def layer_norm_backward(dy, cache):
    xhat, rstd, g = cache
    dg = (dy * xhat).sum(axis=0)
    db = dy.sum(axis=0)
    dxhat = dy * g
    dx = rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True)
                 - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    return dx, dg, db


def gelu(u):
    t = np.tanh(GELU_C * (u + 0.044715 * u ** 3))
    return 0.5 * u * (1.0 + t), t


def gelu_backward(du_out, u, t):
    inner_grad = GELU_C * (1.0 + 3.0 * 0.044715 * u * u)
    return du_out * (0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * inner_grad)


def _causal(seq):
    return np.tril(np.ones((seq, seq), dtype=bool))


# ----------------------------------------------------------------------------
# The model
# ----------------------------------------------------------------------------

def forward(params, tokens, heads, with_cache=False):
    """The loss (a 0-d array of the parameters' dtype), and the cache for backward."""
    wte, wpe = params["wte"], params["wpe"]
    dtype = wte.dtype
    batch, seq = tokens.shape[0], tokens.shape[1] - 1
    d = wte.shape[1]
    hd = d // heads
    rows = batch * seq
    inputs = tokens[:, :seq].reshape(-1).astype(np.int64)
    labels = tokens[:, 1:].reshape(-1).astype(np.int64)
    layers = sum(1 for name in params if name.endswith("_attn_qkv_w"))
    scale = dtype.type(1.0 / math.sqrt(hd))
    allowed = _causal(seq)

    h = (wte[inputs].reshape(batch, seq, d) + wpe[None]).reshape(rows, d)
    caches = []
    for layer in range(layers):
        p = lambda name: params["h%d_%s" % (layer, name)]  # noqa: E731
        a, ln1 = layer_norm(h, p("ln1_g"), p("ln1_b"))
        qkv = a @ p("attn_qkv_w") + p("attn_qkv_b")

        def heads_of(cols):
            return cols.reshape(batch, seq, heads, hd).transpose(0, 2, 1, 3)
        q, k, v = (heads_of(qkv[:, i * d:(i + 1) * d]) for i in range(3))
        s = np.where(allowed, (q @ k.transpose(0, 1, 3, 2)) * scale, dtype.type(MASK_VALUE))
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        probs = e / e.sum(axis=-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(rows, d)
        h_mid = h + (ctx @ p("attn_proj_w") + p("attn_proj_b"))
        mid, ln2 = layer_norm(h_mid, p("ln2_g"), p("ln2_b"))
        u = mid @ p("mlp_fc_w") + p("mlp_fc_b")
        act, t = gelu(u)
        h_out = h_mid + (act @ p("mlp_proj_w") + p("mlp_proj_b"))
        caches.append(dict(a=a, ln1=ln1, q=q, k=k, v=v, probs=probs, ctx=ctx,
                           mid=mid, ln2=ln2, u=u, t=t, act=act))
        h = h_out
    hf, lnf = layer_norm(h, params["ln_f_g"], params["ln_f_b"])
    logits = hf @ wte.T
    shifted = logits - logits.max(axis=1, keepdims=True)
    sumexp = np.exp(shifted).sum(axis=1)
    loss = (np.log(sumexp) - shifted[np.arange(rows), labels]).mean()
    if not with_cache:
        return loss
    cache = dict(inputs=inputs, labels=labels, batch=batch, seq=seq, heads=heads, hd=hd,
                 scale=scale, allowed=allowed, layers=caches, hf=hf, lnf=lnf,
                 softmax=np.exp(shifted) / sumexp[:, None])
    return loss, cache


def backward(params, cache):
    """Gradients of the loss with respect to every parameter."""
    grads = OrderedDict((name, np.zeros_like(value)) for name, value in params.items())
    batch, seq, heads, hd = cache["batch"], cache["seq"], cache["heads"], cache["hd"]
    rows, d = batch * seq, params["wte"].shape[1]
    wte = params["wte"]

    # Cross-entropy and the tied LM head.
    dlogits = cache["softmax"].copy()
    dlogits[np.arange(rows), cache["labels"]] -= 1.0
    dlogits /= rows
    grads["wte"] += dlogits.T @ cache["hf"]
    dh, grads["ln_f_g"], grads["ln_f_b"] = layer_norm_backward(dlogits @ wte, cache["lnf"])

    for layer in reversed(range(len(cache["layers"]))):
        c = cache["layers"][layer]
        name = lambda n: "h%d_%s" % (layer, n)  # noqa: E731
        p = lambda n: params[name(n)]  # noqa: E731

        # h_out = h_mid + gelu(mid @ fc_w + fc_b) @ proj_w + proj_b
        grads[name("mlp_proj_w")] = c["act"].T @ dh
        grads[name("mlp_proj_b")] = dh.sum(axis=0)
        du = gelu_backward(dh @ p("mlp_proj_w").T, c["u"], c["t"])
        grads[name("mlp_fc_w")] = c["mid"].T @ du
        grads[name("mlp_fc_b")] = du.sum(axis=0)
        dmid, grads[name("ln2_g")], grads[name("ln2_b")] = layer_norm_backward(
            du @ p("mlp_fc_w").T, c["ln2"])
        dh_mid = dh + dmid

        # h_mid = h + merge(softmax(mask(q k^T * scale)) v) @ attn_proj_w + attn_proj_b
        grads[name("attn_proj_w")] = c["ctx"].T @ dh_mid
        grads[name("attn_proj_b")] = dh_mid.sum(axis=0)
        dctx = (dh_mid @ p("attn_proj_w").T).reshape(batch, seq, heads, hd).transpose(0, 2, 1, 3)
        probs = c["probs"]
        dprobs = dctx @ c["v"].transpose(0, 1, 3, 2)
        dv = probs.transpose(0, 1, 3, 2) @ dctx
        ds = probs * (dprobs - (dprobs * probs).sum(axis=-1, keepdims=True))
        # Masked scores are constants: no gradient flows to them.
        ds = np.where(cache["allowed"], ds, 0.0) * cache["scale"]
        dq = ds @ c["k"]
        dk = ds.transpose(0, 1, 3, 2) @ c["q"]
        merge = lambda t: t.transpose(0, 2, 1, 3).reshape(rows, d)  # noqa: E731
        dqkv = np.concatenate([merge(dq), merge(dk), merge(dv)], axis=1)
        grads[name("attn_qkv_w")] = c["a"].T @ dqkv
        grads[name("attn_qkv_b")] = dqkv.sum(axis=0)
        da, grads[name("ln1_g")], grads[name("ln1_b")] = layer_norm_backward(
            dqkv @ p("attn_qkv_w").T, c["ln1"])
        dh = dh_mid + da

    # Embeddings: position rows summed over the batch, token rows scattered.
    grads["wpe"] = dh.reshape(batch, seq, d).sum(axis=0)
    np.add.at(grads["wte"], cache["inputs"], dh)
    return grads


def loss_and_grads(params, tokens, heads):
    loss, cache = forward(params, tokens, heads, with_cache=True)
    return loss, backward(params, cache)


def sgd_step(params, tokens, heads, lr):
    """One step of @train_step: (loss, new params) with p - lr * g."""
    loss, grads = loss_and_grads(params, tokens, heads)
    dtype = params["wte"].dtype
    lr = dtype.type(lr)
    return loss, OrderedDict((n, params[n] - lr * grads[n]) for n in params), grads


def random_params(shapes, rng, dtype=np.float64, scale=0.2):
    """Random parameters unlike any default initializer (gains around 1)."""
    params = OrderedDict()
    for name, shape in shapes.items():
        value = rng.normal(0.0, scale, shape)
        if name.endswith("_g"):
            value += 1.0
        params[name] = value.astype(dtype)
    return params


# ----------------------------------------------------------------------------
# Self-test: the backward against central finite differences (float64)
# ----------------------------------------------------------------------------

def _self_test():
    config = dict(batch=2, seq=5, vocab=11, layers=2, d_model=8, heads=2)
    rng = np.random.default_rng(0)
    params = random_params(param_shapes(**config), rng)
    tokens = rng.integers(0, config["vocab"], (config["batch"], config["seq"] + 1)).astype(np.int32)
    # Ensure a repeated token so the scatter-add into wte sums rows.
    tokens[1, 0] = tokens[0, 0]
    loss, grads = loss_and_grads(params, tokens, config["heads"])

    # Central differences with step 1e-6 in float64 have a truncation error
    # O(h^2 f''') ~ 1e-12 and a rounding error ~ 1e-16 / 1e-6 = 1e-10 relative
    # to the loss (~2.4), so agreement to 1e-6 of the gradient's scale means
    # the backward is right (a wrong term moves it by ~1e-2 or more).
    step, tolerance = 1e-6, 1e-6
    worst = 0.0
    failures = []
    for name, value in params.items():
        flat = value.reshape(-1)
        picks = rng.choice(flat.size, size=min(12, flat.size), replace=False)
        scale = max(np.abs(grads[name]).max(), 1e-3)
        for i in picks:
            saved = flat[i]
            flat[i] = saved + step
            up = forward(params, tokens, config["heads"])
            flat[i] = saved - step
            down = forward(params, tokens, config["heads"])
            flat[i] = saved
            numeric = (up - down) / (2 * step)
            err = abs(numeric - grads[name].reshape(-1)[i]) / scale
            worst = max(worst, err)
            if err > tolerance:
                failures.append("%s[%d]: backward %.9g, finite differences %.9g"
                                % (name, i, grads[name].reshape(-1)[i], numeric))
    count = sum(min(12, v.size) for v in params.values())
    if failures:
        print("FAIL backward vs finite differences (tolerance %g of each gradient's max):" % tolerance)
        print("\n".join(failures[:20]))
        return 1
    print("PASS backward matches central finite differences in float64 at %d elements of %d "
          "tensors (loss %.6f, worst error %.2g of the gradient's max)"
          % (count, len(params), loss, worst))
    return 0


if __name__ == "__main__":
    sys.exit(_self_test())
