"""The model zoo: training steps of real architectures as MLIR.

Each model is a forward loss function written with recast.builder and a
training step that differentiates it with `recast.value_and_grad` and applies
SGD. Every model has a small configuration that trains on the CPU in seconds
and a large one with the published sizes, for analysis (autodiff, memory
report, rematerialization) rather than execution.

    /usr/bin/python3 python/recast/zoo.py --out examples/models
    /usr/bin/python3 python/recast/zoo.py --out /tmp/m --only gpt-tiny --loss-only

writes `<model>-<config>.mlir` (and examples/models/README.md) or, with
--loss-only, `<model>-<config>.loss.mlir`: only a public @loss whose arguments
carry the initializers @train_step gives them, so that `recast-run
--entry=loss` evaluates the forward without autodiff.

Images are NHWC and filters HWCF; labels are one-hot (`recast.init =
"onehot"`), token ids integer (`recast.init = "index:<vocab>"`).
"""

import argparse
import math
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recast.builder import At, Model, format_float, he_uniform  # noqa: E402


def _divisible(value, divisor=8):
    """MobileNetV2's channel rounding: nearest multiple of 8, never below 90%."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


class Zoo:
    """Registry of (model, config) -> builder function, settings and a summary."""

    def __init__(self):
        self.entries = {}

    def add(self, model, config, build, lr, summary, **settings):
        self.entries["%s-%s" % (model, config)] = (build, lr, summary, settings)


ZOO = Zoo()


# ----------------------------------------------------------------------------
# MLP
# ----------------------------------------------------------------------------

def build_mlp(batch, sizes, classes):
    """relu(x @ w1 + b1) ... @ wN + bN, softmax cross-entropy with one-hot labels.

    With sizes (784, 256) and 10 classes at batch 64 the signature is exactly
    the one of examples/mlp/train_step.mlir (w1, b1, w2, b2, x, y), so the
    autodiff result can be compared with that hand-written backward.
    """
    m = Model("mlp")
    f = m.loss
    widths = list(sizes) + [classes]
    weights = []
    for i in range(len(widths) - 1):
        weights.append((m.param("w%d" % (i + 1), (widths[i], widths[i + 1])),
                        m.param("b%d" % (i + 1), (widths[i + 1],))))
    x = m.input("x", (batch, sizes[0]))
    y = m.input("y", (batch, classes), init="onehot")
    h = x
    for i, (w, b) in enumerate(weights):
        last = i == len(weights) - 1
        h = f.linear(h, w, b, name="logits" if last else "fc%d" % (i + 1))
        if not last:
            h = f.relu(h, name="h%d" % (i + 1))
    m.set_loss(f.cross_entropy(h, y, name="loss"))
    return m


ZOO.add("mlp", "small", build_mlp, lr=0.1,
        summary="784-256-10 MLP, batch 64 (the signature of examples/mlp)",
        batch=64, sizes=(784, 256), classes=10)


# ----------------------------------------------------------------------------
# GPT-2
# ----------------------------------------------------------------------------

def build_gpt(batch, seq, vocab, layers, d_model, heads, eps=1e-5):
    """GPT-2-style decoder: token + position embedding, pre-LN blocks with
    causal multi-head attention and a GELU (tanh) MLP, final layer norm, LM
    head tied to the token embedding, mean next-token cross-entropy.

    The batch is `tokens` [batch, seq + 1]: positions 0..seq-1 are the input
    and 1..seq the labels, so every position predicts the next token.
    """
    if d_model % heads:
        raise ValueError("d_model %d is not a multiple of heads %d" % (d_model, heads))
    hd = d_model // heads
    rows = batch * seq
    m = Model("gpt")
    f = m.loss
    wte = m.param("wte", (vocab, d_model))
    wpe = m.param("wpe", (seq, d_model))
    tokens = m.input("tokens", (batch, seq + 1), elem="i32", init="index:%d" % vocab)

    f.comment("Next-token prediction: inputs are tokens[:, :-1], labels tokens[:, 1:].")
    inputs = f.extract_slice(tokens, (0, 0), (batch, seq), name="inputs")
    targets = f.extract_slice(tokens, (0, 1), (batch, seq), name="targets")

    f.comment("Token embedding (a gather of wte's rows) plus position embedding.")
    tok = f.embedding(inputs, wte, name="tok_emb")
    tok3 = f.expand_shape(tok, [[0, 1], [2]], (batch, seq, d_model), name="tok_emb_bt")
    h3 = f.ew(lambda s, t, p: s.addf(t, p), tok3, At(wpe, (1, 2)), name="emb")
    h = f.collapse_shape(h3, [[0, 1], [2]], name="h")

    def split_heads(qkv, index, key, prefix):
        """Columns [index*D, (index+1)*D) of qkv as [B*H, T, hd] ([B*H, hd, T] for keys)."""
        part = f.extract_slice(qkv, (0, index * d_model), (rows, d_model), name=prefix)
        part4 = f.expand_shape(part, [[0, 1], [2, 3]], (batch, seq, heads, hd), name=prefix + "_4d")
        perm = (0, 2, 3, 1) if key else (0, 2, 1, 3)
        moved = f.transpose(part4, perm, name=prefix + "_heads")
        return f.collapse_shape(moved, [[0, 1], [2], [3]], name=prefix + "_bh")

    for layer in range(layers):
        p = "h%d_" % layer
        ln1_g = m.param(p + "ln1_g", (d_model,), init="ones")
        ln1_b = m.param(p + "ln1_b", (d_model,))
        qkv_w = m.param(p + "attn_qkv_w", (d_model, 3 * d_model))
        qkv_b = m.param(p + "attn_qkv_b", (3 * d_model,))
        proj_w = m.param(p + "attn_proj_w", (d_model, d_model))
        proj_b = m.param(p + "attn_proj_b", (d_model,))
        ln2_g = m.param(p + "ln2_g", (d_model,), init="ones")
        ln2_b = m.param(p + "ln2_b", (d_model,))
        fc_w = m.param(p + "mlp_fc_w", (d_model, 4 * d_model))
        fc_b = m.param(p + "mlp_fc_b", (4 * d_model,))
        mproj_w = m.param(p + "mlp_proj_w", (4 * d_model, d_model))
        mproj_b = m.param(p + "mlp_proj_b", (d_model,))

        f.comment("Block %d: causal self-attention on layer_norm(h)." % layer)
        a = f.layer_norm(h, ln1_g, ln1_b, eps, name=p + "ln1")
        qkv = f.linear(a, qkv_w, qkv_b, name=p + "qkv")
        q = split_heads(qkv, 0, False, p + "q")
        kt = split_heads(qkv, 1, True, p + "kt")
        v = split_heads(qkv, 2, False, p + "v")
        scores = f.batch_matmul(q, kt, name=p + "scores")
        masked = f.causal_mask(scores, scale=1.0 / math.sqrt(hd), name=p + "masked")
        probs = f.softmax(masked, name=p + "probs")
        ctx = f.batch_matmul(probs, v, name=p + "ctx")
        ctx4 = f.expand_shape(ctx, [[0, 1], [2], [3]], (batch, heads, seq, hd), name=p + "ctx_4d")
        ctx_bt = f.transpose(ctx4, (0, 2, 1, 3), name=p + "ctx_bthd")
        merged = f.collapse_shape(ctx_bt, [[0, 1], [2, 3]], name=p + "ctx_merged")
        proj = f.matmul(merged, proj_w, name=p + "attn_proj")
        # Residual and bias in one elementwise op, as a fused addmm + add would.
        h = f.ew(lambda s, x, y, c: s.addf(x, s.addf(y, c)), h, proj, At(proj_b, (1,)),
                 name=p + "attn_out")

        f.comment("Block %d: GELU MLP on layer_norm(h)." % layer)
        mid = f.layer_norm(h, ln2_g, ln2_b, eps, name=p + "ln2")
        fc = f.matmul(mid, fc_w, name=p + "fc")
        act = f.ew(lambda s, x, c: s.gelu(s.addf(x, c)), fc, At(fc_b, (1,)), name=p + "gelu")
        out = f.matmul(act, mproj_w, name=p + "mlp_proj")
        h = f.ew(lambda s, x, y, c: s.addf(x, s.addf(y, c)), h, out, At(mproj_b, (1,)),
                 name=p + "mlp_out")

    ln_f_g = m.param("ln_f_g", (d_model,), init="ones")
    ln_f_b = m.param("ln_f_b", (d_model,))
    f.comment("Final layer norm, LM head tied to wte, next-token cross-entropy.")
    hf = f.layer_norm(h, ln_f_g, ln_f_b, eps, name="ln_f")
    logits = f.matmul(hf, f.transpose(wte, (1, 0), name="wte_t"), name="logits")
    m.set_loss(f.cross_entropy(logits, targets, name="loss"))
    return m


ZOO.add("gpt", "tiny", build_gpt, lr=0.02,
        summary="2 layers, d 64, 4 heads, seq 32, vocab 128, batch 2",
        batch=2, seq=32, vocab=128, layers=2, d_model=64, heads=4)
ZOO.add("gpt", "gpt2-small", build_gpt, lr=0.01,
        summary="GPT-2 small: 12 layers, d 768, 12 heads, seq 1024, vocab 50257, batch 1",
        batch=1, seq=1024, vocab=50257, layers=12, d_model=768, heads=12)


# ----------------------------------------------------------------------------
# Convolutional networks (NHWC, HWCF filters)
# ----------------------------------------------------------------------------

def _conv_bn(m, x, name, out_ch, kernel, stride, padding, act):
    """conv (no bias) -> training-mode batch norm -> act ("relu", "relu6" or None)."""
    f = m.loss
    w = m.param(name + "_w", (kernel, kernel, x.shape[3], out_ch))
    g = m.param(name + "_bn_g", (out_ch,), init="ones")
    b = m.param(name + "_bn_b", (out_ch,))
    y = f.batch_norm(f.conv2d(x, w, stride, padding, name=name), g, b, name=name + "_bn")
    if act == "relu":
        return f.relu(y, name=name + "_relu")
    if act == "relu6":
        return f.relu6(y, name=name + "_relu6")
    return y


def _conv_bias_relu(m, x, name, out_ch, kernel, padding, relu=True):
    """conv with bias (and ReLU), for the networks without normalization:
    filters start from He's uniform bound so deep ReLU stacks keep their scale."""
    f = m.loss
    fan_in = kernel * kernel * x.shape[3]
    w = m.param(name + "_w", (kernel, kernel, x.shape[3], out_ch),
                init=he_uniform(fan_in) if relu else None)
    b = m.param(name + "_b", (out_ch,))
    y = f.conv2d(x, w, 1, padding, name=name + "_conv")
    if relu:
        return f.ew(lambda s, v, c: s.relu(s.addf(v, c)), y, At(b, (3,)), name=name)
    return f.add_bias(y, b, name=name)


def _classifier_loss(m, features, classes, name="fc"):
    f = m.loss
    w = m.param(name + "_w", (features.shape[1], classes))
    b = m.param(name + "_b", (classes,))
    y = m.input("y", (features.shape[0], classes), init="onehot")
    logits = f.linear(features, w, b, name="logits")
    m.set_loss(f.cross_entropy(logits, y, name="loss"))


def build_resnet18(batch, image, width, classes):
    """ResNet-18 for CIFAR-sized input (He et al. 2016; the CIFAR variant with a
    3x3 stem and no max pool): four stages of two BasicBlocks with widths
    width * (1, 2, 4, 8), batch norm in training mode, global average pool,
    linear classifier."""
    m = Model("resnet18")
    f = m.loss
    x = m.input("x", (batch, image, image, 3))
    f.comment("Stem: 3x3 conv, batch norm, ReLU.")
    h = _conv_bn(m, x, "conv1", width, 3, 1, 1, "relu")
    in_ch = width
    for stage in range(4):
        out_ch = width * 2 ** stage
        for block in range(2):
            p = "layer%d_%d_" % (stage + 1, block)
            stride = 2 if stage > 0 and block == 0 else 1
            f.comment("BasicBlock %s: %d -> %d channels, stride %d." % (p[:-1], in_ch, out_ch, stride))
            y = _conv_bn(m, h, p + "conv1", out_ch, 3, stride, 1, "relu")
            y = _conv_bn(m, y, p + "conv2", out_ch, 3, 1, 1, None)
            shortcut = h
            if stride != 1 or in_ch != out_ch:
                shortcut = _conv_bn(m, h, p + "downsample", out_ch, 1, stride, 0, None)
            h = f.ew(lambda s, a, b: s.relu(s.addf(a, b)), y, shortcut, name=p + "out")
            in_ch = out_ch
    f.comment("Global average pool and classifier.")
    _classifier_loss(m, f.global_avg_pool(h, name="pool"), classes)
    return m


ZOO.add("resnet18", "small", build_resnet18, lr=0.01,
        summary="CIFAR 32x32x3, widths 8-64, 10 classes, batch 4",
        batch=4, image=32, width=8, classes=10)
ZOO.add("resnet18", "paper", build_resnet18, lr=0.01,
        summary="CIFAR 32x32x3, widths 64-512, 10 classes, batch 128",
        batch=128, image=32, width=64, classes=10)


VGG16_LAYERS = (2, 2, 3, 3, 3)   # 3x3 convs per stage of configuration D


def build_vgg16(batch, image, widths, hidden, classes):
    """VGG-16 (Simonyan & Zisserman 2015, configuration D): 13 3x3 convs with
    ReLU in five stages, 2x2 max pools, three fully connected layers. Dropout
    is left out so that the step is deterministic."""
    m = Model("vgg16")
    f = m.loss
    x = m.input("x", (batch, image, image, 3))
    h = x
    for stage, (count, ch) in enumerate(zip(VGG16_LAYERS, widths)):
        f.comment("Stage %d: %d conv3x3-%d + ReLU, then 2x2 max pool." % (stage + 1, count, ch))
        for i in range(count):
            h = _conv_bias_relu(m, h, "conv%d_%d" % (stage + 1, i + 1), ch, 3, 1)
        h = f.max_pool2d(h, 2, name="pool%d" % (stage + 1))
    f.comment("Classifier: flatten (HWC order), fc6, fc7 with ReLU, fc8.")
    n, hh, ww, c = h.shape
    h = f.collapse_shape(h, [[0], [1, 2, 3]], name="flat")
    for name in ("fc6", "fc7"):
        w = m.param(name + "_w", (h.shape[1], hidden), init=he_uniform(h.shape[1]))
        b = m.param(name + "_b", (hidden,))
        mm = f.matmul(h, w, name=name + "_mm")
        h = f.ew(lambda s, v, cb: s.relu(s.addf(v, cb)), mm, At(b, (1,)), name=name)
    _classifier_loss(m, h, classes, name="fc8")
    return m


ZOO.add("vgg16", "small", build_vgg16, lr=0.01,
        summary="32x32x3, widths 8-64, fc 64, 10 classes, batch 2",
        batch=2, image=32, widths=(8, 16, 32, 64, 64), hidden=64, classes=10)
ZOO.add("vgg16", "paper", build_vgg16, lr=0.01,
        summary="224x224x3, widths 64-512, fc 4096, 1000 classes, batch 32",
        batch=32, image=224, widths=(64, 128, 256, 512, 512), hidden=4096, classes=1000)


# Depthwise convolutions as linalg.depthwise_conv_2d_nhwc_hwc rather than one
# strided slice per tap (zoo.py --depthwise-op; the committed files use slices).
DEPTHWISE_OP = False

# (expansion t, output channels c, repeats n, first stride s), Sandler et al. table 2
MOBILENETV2_BLOCKS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                      (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def build_mobilenetv2(batch, image, width_mult, last_channel, classes, stem_stride=2):
    """MobileNetV2 (Sandler et al. 2018): 3x3 stem, 17 inverted residual blocks
    (1x1 expand, 3x3 depthwise, 1x1 linear projection, residual when the shape
    is kept), 1x1 head conv, global average pool, classifier; batch norm in
    training mode and ReLU6."""
    m = Model("mobilenetv2")
    f = m.loss
    x = m.input("x", (batch, image, image, 3))
    f.comment("Stem: 3x3 conv, stride %d." % stem_stride)
    in_ch = _divisible(32 * width_mult)
    h = _conv_bn(m, x, "stem", in_ch, 3, stem_stride, 1, "relu6")
    index = 0
    for t, c, n, s in MOBILENETV2_BLOCKS:
        out_ch = _divisible(c * width_mult)
        for i in range(n):
            index += 1
            p = "block%d_" % index
            stride = s if i == 0 else 1
            hidden = in_ch * t
            f.comment("Inverted residual %d: %d -> %d -> %d channels, stride %d."
                      % (index, in_ch, hidden, out_ch, stride))
            y = h
            if t != 1:
                y = _conv_bn(m, y, p + "expand", hidden, 1, 1, 0, "relu6")
            dw = m.param(p + "dw_w", (3, 3, hidden))
            g = m.param(p + "dw_bn_g", (hidden,), init="ones")
            b = m.param(p + "dw_bn_b", (hidden,))
            y = f.depthwise_conv2d(y, dw, stride, 1, name=p + "dw",
                                   native=DEPTHWISE_OP)
            y = f.relu6(f.batch_norm(y, g, b, name=p + "dw_bn"), name=p + "dw_relu6")
            y = _conv_bn(m, y, p + "project", out_ch, 1, 1, 0, None)
            if stride == 1 and in_ch == out_ch:
                y = f.add(h, y, name=p + "out")
            h = y
            in_ch = out_ch
    f.comment("Head: 1x1 conv to %d channels, global average pool, classifier." % last_channel)
    h = _conv_bn(m, h, "head", last_channel, 1, 1, 0, "relu6")
    _classifier_loss(m, f.global_avg_pool(h, name="pool"), classes, name="classifier")
    return m


ZOO.add("mobilenetv2", "small", build_mobilenetv2, lr=0.01,
        summary="32x32x3, width 0.25, stem stride 1, head 64, 10 classes, batch 2",
        batch=2, image=32, width_mult=0.25, last_channel=64, classes=10, stem_stride=1)
ZOO.add("mobilenetv2", "paper", build_mobilenetv2, lr=0.01,
        summary="224x224x3, width 1.0, head 1280, 1000 classes, batch 32",
        batch=32, image=224, width_mult=1.0, last_channel=1280, classes=1000)


def build_unet(batch, image, in_channels, base, depth, classes, padding):
    """U-Net (Ronneberger et al. 2015): `depth` levels of two 3x3 convs + ReLU
    and a 2x2 max pool, a bottleneck, then per level a 2x2 up-convolution
    (nearest 2x upsampling followed by a 2x2 conv that halves the channels),
    concatenation with the cropped skip connection and two 3x3 convs; a 1x1
    conv to the classes and pixel-wise softmax cross-entropy. `padding` 0 is
    the paper's valid convolutions (572 -> 388), 1 keeps the size."""
    m = Model("unet")
    f = m.loss
    x = m.input("x", (batch, image, image, in_channels))

    def double_conv(h, name, ch):
        h = _conv_bias_relu(m, h, name + "_conv1", ch, 3, padding)
        return _conv_bias_relu(m, h, name + "_conv2", ch, 3, padding)

    skips = []
    h = x
    for level in range(1, depth + 1):
        f.comment("Contracting level %d: two conv3x3-%d, 2x2 max pool." % (level, base << (level - 1)))
        h = double_conv(h, "down%d" % level, base << (level - 1))
        skips.append(h)
        h = f.max_pool2d(h, 2, name="down%d_pool" % level)
    f.comment("Bottleneck: two conv3x3-%d." % (base << depth))
    h = double_conv(h, "bottom", base << depth)
    for level in range(depth, 0, -1):
        ch = base << (level - 1)
        name = "up%d" % level
        f.comment("Expanding level %d: up-conv to %d channels, crop and concat, two conv3x3."
                  % (level, ch))
        up = f.upsample_nearest(h, 2, name=name + "_upsampled")
        w = m.param(name + "_upconv_w", (2, 2, up.shape[3], ch))
        b = m.param(name + "_upconv_b", (ch,))
        # Padding one row and column at the end keeps the upsampled size, as
        # the paper's stride-2 transposed convolution does.
        up = f.add_bias(f.conv2d(up, w, 1, (0, 1, 0, 1), name=name + "_upconv_mm"), b,
                        name=name + "_upconv")
        skip = skips[level - 1]
        if skip.shape[1:3] != up.shape[1:3]:
            skip = f.center_crop(skip, up.shape[1], up.shape[2], name=name + "_skip")
        h = double_conv(f.concat([skip, up], axis=3, name=name + "_cat"), name, ch)
    f.comment("1x1 conv to %d classes, pixel-wise softmax cross-entropy." % classes)
    logits = _conv_bias_relu(m, h, "out", classes, 1, 0, relu=False)
    n, hh, ww, k = logits.shape
    y = m.input("y", (n, hh, ww, k), init="onehot")
    flat_logits = f.collapse_shape(logits, [[0, 1, 2], [3]], name="logits_flat")
    flat_y = f.collapse_shape(y, [[0, 1, 2], [3]], name="y_flat")
    m.set_loss(f.cross_entropy(flat_logits, flat_y, name="loss"))
    return m


ZOO.add("unet", "small", build_unet, lr=0.01,
        summary="32x32x1, same padding, base 8, depth 3, 2 classes, batch 2",
        batch=2, image=32, in_channels=1, base=8, depth=3, classes=2, padding=1)
ZOO.add("unet", "paper", build_unet, lr=0.01,
        summary="572x572x1 -> 388x388x2, valid convs, base 64, depth 4, batch 1",
        batch=1, image=572, in_channels=1, base=64, depth=4, classes=2, padding=0)


# ----------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------

def build(key):
    """The Model of a zoo entry and its learning rate."""
    build_fn, lr, _, settings = ZOO.entries[key]
    return build_fn(**settings), lr


def header(key, model, lr, loss_only=False):
    _, _, summary, settings = ZOO.entries[key]
    lines = ["%s: %s." % (key, summary),
             "%s parameters in %d tensors." % ("{:,}".format(model.parameter_count),
                                                len(model.params)),
             "Settings: %s." % ", ".join("%s=%s" % kv for kv in settings.items())]
    if loss_only:
        lines += ["",
                  "Forward only: a public @loss whose arguments carry the initializers",
                  "@train_step gives them, for `recast-run --entry=loss`."]
    else:
        lines += ["",
                  "@loss is the forward with the loss; @train_step differentiates it with",
                  "recast.value_and_grad (see --recast-autodiff) and applies SGD, lr %s."
                  % format_float(lr)]
    lines += ["",
              "Generated by scripts/gen-models (python/recast/zoo.py): edit the generator,",
              "not this file."]
    return lines


def render(key, lr=None, loss_only=False):
    model, default_lr = build(key)
    lr = default_lr if lr is None else lr
    head = header(key, model, lr, loss_only)
    if loss_only:
        return model, model.render_loss_only(head)
    return model, model.render_train_step(lr, head)


def readme(models):
    lines = ["# Model zoo",
             "",
             "Training steps of real architectures, generated by `scripts/gen-models`",
             "(`python/recast/zoo.py`, built on `python/recast/builder.py`); edit the",
             "generator, not the files. Each file holds `@loss`, the forward with the loss",
             "in linalg on tensors, and `@train_step`, which differentiates it with",
             "`recast.value_and_grad` and applies SGD, following the calling convention of",
             "docs/UserGuide.md: parameters first (`recast.param`), then the batch.",
             "",
             "`small` and `tiny` configurations are sized to train with `recast-run` on the",
             "CPU; `paper` and `gpt2-small` have the published layer sizes (GPT-2 small's",
             "124,439,808 parameters, VGG-16's 138,357,544, ...) and are meant for",
             "analysis (autodiff, memory report, rematerialization), not execution.",
             "",
             "| file | model | parameters | tensors | lr |",
             "|---|---|---:|---:|---:|"]
    for key, (model, lr) in models.items():
        summary = ZOO.entries[key][2]
        lines.append("| `%s.mlir` | %s | %s | %d | %s |"
                     % (key, summary, "{:,}".format(model.parameter_count), len(model.params),
                        format_float(lr)))
    lines += ["",
              "Learning rates: gpt-tiny's decreases the loss at each of 20 steps in the numpy",
              "reference for seeds 0 to 5 (test/Execution/gpt-reference.py checks a run against",
              "it), mlp-small uses the 0.1 of examples/mlp, and the others a conservative 0.01.",
              "`--lr` overrides them.",
              "",
              "The forward uses only func, arith.constant, tensor.empty, linalg.fill,",
              "linalg.generic with arith/math bodies, linalg matmul / batch_matmul / transpose",
              "/ broadcast / conv_2d_nhwc_hwcf / pooling_nhwc_max, and tensor expand_shape /",
              "collapse_shape / extract_slice / insert_slice / pad. Softmax, layer and batch",
              "norm, GELU, cross-entropy, embeddings (one-hot @ table) and depthwise",
              "convolutions (one strided slice per filter tap) are composed from those.",
              "Images are NHWC, filters HWCF, labels one-hot, token ids `i32`.",
              "",
              "```sh",
              "scripts/gen-models                       # regenerate everything here",
              "build/bin/recast-opt examples/models/gpt-tiny.mlir --recast-memory-report=report=- -o /dev/null",
              "/usr/bin/python3 python/recast/zoo.py --out /tmp/m --only gpt-tiny --loss-only",
              "build/bin/recast-run /tmp/m/gpt-tiny.loss.mlir --entry=loss --steps=1",
              "```",
              ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--only", action="append", default=[],
                        help="a <model>-<config> to write (repeatable; default all)")
    parser.add_argument("--lr", type=float, help="SGD learning rate (default: per model)")
    parser.add_argument("--loss-only", action="store_true",
                        help="write <key>.loss.mlir with a public @loss only")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--depthwise-op", action="store_true",
                        help="MobileNetV2's depthwise convolutions as "
                             "linalg.depthwise_conv_2d_nhwc_hwc instead of one "
                             "strided slice per tap")
    args = parser.parse_args(argv)
    global DEPTHWISE_OP
    DEPTHWISE_OP = args.depthwise_op
    if args.list:
        for key, (_, lr, summary, _) in ZOO.entries.items():
            print("%-22s lr %-6s %s" % (key, format_float(lr), summary))
        return 0
    unknown = [k for k in args.only if k not in ZOO.entries]
    if unknown:
        parser.error("unknown model(s) %s; known: %s" % (", ".join(unknown), ", ".join(ZOO.entries)))
    keys = args.only or list(ZOO.entries)
    os.makedirs(args.out, exist_ok=True)
    built = {}
    for key in keys:
        model, text = render(key, args.lr, args.loss_only)
        suffix = ".loss.mlir" if args.loss_only else ".mlir"
        with open(os.path.join(args.out, key + suffix), "w") as out:
            out.write(text)
        built[key] = (model, args.lr if args.lr is not None else ZOO.entries[key][1])
    # The README describes the whole zoo, so only a full default run writes it.
    if not args.only and not args.loss_only and args.lr is None:
        with open(os.path.join(args.out, "README.md"), "w") as out:
            out.write(readme(built))
    return 0


if __name__ == "__main__":
    sys.exit(main())
