"""A small builder that writes MLIR training graphs as text.

It emits linalg on tensors with arith/math bodies: exactly the forward IR that
recast's passes take as input, without needing MLIR's Python bindings. The
generated forward uses only

    func.func / func.return, arith.constant, tensor.empty, linalg.fill,
    linalg.generic (bodies of arith/math ops and linalg.index),
    linalg.matmul / batch_matmul / transpose / broadcast /
    conv_2d_nhwc_hwcf / pooling_nhwc_max / pooling_nhwc_sum,
    tensor.expand_shape / collapse_shape / extract_slice / insert_slice / pad

so that `--recast-autodiff` needs a rule for nothing else. Aggregates such as
softmax, layer norm or cross-entropy are composed from those ops here rather
than emitted as named ops (no linalg.softmax, no scf). A body reads a tensor
from above only to gather (`Body.extract`: embeddings and the negative
log-likelihood of integer labels), as torch-mlir writes them, behind a bounds
check (cf.assert).

Usage:

    m = Model("mlp")
    x = m.input("x", (64, 784))
    y = m.input("y", (64, 10), init="onehot")
    w = m.param("w", (784, 10))
    f = m.loss
    loss = f.cross_entropy(f.matmul(x, w), y)
    m.set_loss(loss)
    text = m.render_train_step(lr=0.1)

`Model.render_train_step` writes `@loss` (the forward with the loss) and
`@train_step`, which calls `recast.value_and_grad @loss` for the parameters and
applies SGD, following the calling convention of docs/UserGuide.md.
"""

import math
import re

F32 = "f32"
# Lowest finite f32: the identity of a max reduction without writing -inf,
# so that no infinity ever appears in a generated graph.
F32_LOWEST = -3.4028234663852886e38

_FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


def format_float(value):
    """An MLIR float literal for `value`: shortest round-trip decimal, always
    with a '.' (MLIR reads `1e-05` as an integer followed by garbage)."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError("non-finite constant %r: the builder only writes finite values" % value)
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def tensor_type(shape, elem=F32):
    dims = "".join("%dx" % d for d in shape)
    return "tensor<%s%s>" % (dims, elem)


def numel(shape):
    count = 1
    for d in shape:
        count *= d
    return count


def _pair(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


def affine_map(num_dims, exprs):
    """`affine_map<(d0, ..) -> (exprs)>`; an int expression names a loop dim."""
    dims = ", ".join("d%d" % i for i in range(num_dims))
    results = ", ".join("d%d" % e if isinstance(e, int) else e for e in exprs)
    return "affine_map<(%s) -> (%s)>" % (dims, results)


class Value:
    """A tensor SSA value of the function being built."""
    __slots__ = ("name", "shape", "elem")

    def __init__(self, name, shape, elem=F32):
        self.name = name
        self.shape = tuple(int(d) for d in shape)
        self.elem = elem

    @property
    def type(self):
        return tensor_type(self.shape, self.elem)

    @property
    def rank(self):
        return len(self.shape)

    @property
    def numel(self):
        return numel(self.shape)

    def __repr__(self):
        return "%s : %s" % (self.name, self.type)


class At:
    """An operand of an elementwise op or reduction indexed by a subset of the
    loop dims: `At(bias, (1,))` reads bias[d1] in a 2-d loop, i.e. a broadcast
    folded into the indexing map instead of being materialized."""
    __slots__ = ("value", "dims")

    def __init__(self, value, dims):
        self.value = value
        self.dims = tuple(dims)


class Scalar:
    """A scalar SSA value inside a linalg.generic body."""
    __slots__ = ("name", "type")

    def __init__(self, name, type_):
        self.name = name
        self.type = type_


class Body:
    """Writes the scalar body of a linalg.generic or a tensor.pad.

    Python numbers given as operands become arith.constant ops inside the body,
    so every region is self-contained (nothing is captured from above) and a
    pass can clone it without remapping outer values.
    """

    def __init__(self, outer_names):
        self._outer = outer_names
        self._local = set()
        self._constants = {}
        self.lines = []

    def _fresh(self, hint):
        base = "%" + _sanitize(hint)
        name, k = base, 0
        while name in self._outer or name in self._local:
            k += 1
            name = "%s_%d" % (base, k)
        self._local.add(name)
        return name

    def block_arg(self, hint, type_):
        return Scalar(self._fresh(hint), type_)

    def _op(self, hint, text, type_):
        name = self._fresh(hint)
        self.lines.append("%s = %s" % (name, text))
        return Scalar(name, type_)

    def const(self, value, type_=F32):
        key = (type_, repr(value))
        if key not in self._constants:
            literal = format_float(value) if type_ in _FLOAT_TYPES else str(int(value))
            self._constants[key] = self._op("c", "arith.constant %s : %s" % (literal, type_), type_)
        return self._constants[key]

    def _s(self, x, type_=F32):
        return x if isinstance(x, Scalar) else self.const(x, type_)

    def _binary(self, op, a, b, hint):
        a = self._s(a)
        b = self._s(b, a.type)
        return self._op(hint, "arith.%s %s, %s : %s" % (op, a.name, b.name, a.type), a.type)

    def _unary(self, op, a, hint):
        a = self._s(a)
        return self._op(hint, "%s %s : %s" % (op, a.name, a.type), a.type)

    # arith
    def addf(self, a, b):
        return self._binary("addf", a, b, "add")

    def subf(self, a, b):
        return self._binary("subf", a, b, "sub")

    def mulf(self, a, b):
        return self._binary("mulf", a, b, "mul")

    def divf(self, a, b):
        return self._binary("divf", a, b, "div")

    def maximumf(self, a, b):
        return self._binary("maximumf", a, b, "max")

    def negf(self, a):
        return self._unary("arith.negf", a, "neg")

    def cmpf(self, predicate, a, b):
        a = self._s(a)
        b = self._s(b, a.type)
        return self._op("cmp", "arith.cmpf %s, %s, %s : %s" % (predicate, a.name, b.name, a.type), "i1")

    def cmpi(self, predicate, a, b):
        return self._op("cmp", "arith.cmpi %s, %s, %s : %s" % (predicate, a.name, b.name, a.type), "i1")

    def select(self, cond, a, b):
        a = self._s(a)
        b = self._s(b, a.type)
        return self._op("sel", "arith.select %s, %s, %s : %s" % (cond.name, a.name, b.name, a.type),
                        a.type)

    def index(self, dim):
        return self._op("i", "linalg.index %d : index" % dim, "index")

    def index_cast(self, a, to):
        return self._op("ic", "arith.index_cast %s : %s to %s" % (a.name, a.type, to), to)

    def extract(self, table, indices):
        """tensor.extract of an outer tensor at index scalars (a gather), each
        index checked against its dim first: ids out of range stop the step
        with a message instead of reading outside the table."""
        for index, size in zip(indices, table.shape):
            in_range = self._op("ok", "arith.cmpi ult, %s, %s : index"
                                % (index.name, self.const(size, "index").name), "i1")
            self.lines.append('cf.assert %s, "index out of range for %s"'
                              % (in_range.name, table.name))
        return self._op("g", "tensor.extract %s[%s] : %s"
                        % (table.name, ", ".join(i.name for i in indices), table.type), table.elem)

    # math
    def exp(self, a):
        return self._unary("math.exp", a, "exp")

    def log(self, a):
        return self._unary("math.log", a, "log")

    def tanh(self, a):
        return self._unary("math.tanh", a, "tanh")

    def erf(self, a):
        return self._unary("math.erf", a, "erf")

    def sqrt(self, a):
        return self._unary("math.sqrt", a, "sqrt")

    def rsqrt(self, a):
        return self._unary("math.rsqrt", a, "rsqrt")

    # composed scalar functions
    def sigmoid(self, a):
        """1 / (1 + exp(-a)), from ops every rule set already has."""
        return self.divf(1.0, self.addf(1.0, self.exp(self.negf(a))))

    def relu(self, a):
        return self.select(self.cmpf("ogt", a, 0.0), a, 0.0)

    def gelu(self, a, approximate="tanh"):
        """GELU. "tanh": 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3))), GPT-2's
        form; "erf": 0.5 a (1 + erf(a / sqrt(2)))."""
        if approximate == "tanh":
            cube = self.mulf(self.mulf(a, a), a)
            inner = self.mulf(self.addf(a, self.mulf(cube, 0.044715)), math.sqrt(2.0 / math.pi))
            return self.mulf(self.mulf(a, 0.5), self.addf(self.tanh(inner), 1.0))
        if approximate == "erf":
            return self.mulf(self.mulf(a, 0.5), self.addf(self.erf(self.mulf(a, 1.0 / math.sqrt(2.0))), 1.0))
        raise ValueError("gelu approximation %r: expected 'tanh' or 'erf'" % approximate)


def _sanitize(hint):
    hint = re.sub(r"[^A-Za-z0-9_]", "_", str(hint))
    return hint if hint and not hint[0].isdigit() else "v" + hint


class Function:
    """A func.func on tensors being built: arguments, straight-line ops, a return."""

    INDENT = "  "

    def __init__(self, name, private=False):
        self.name = name
        self.private = private
        self.args = []          # [(Value, {attr: text})]
        self.lines = []
        self.results = None
        self._names = set()
        self._constants = {}

    # -- names and arguments ---------------------------------------------
    def fresh(self, hint):
        base = "%" + _sanitize(hint)
        name, k = base, 0
        while name in self._names:
            k += 1
            name = "%s_%d" % (base, k)
        self._names.add(name)
        return name

    def arg(self, name, shape, elem=F32, attrs=None):
        ssa = "%" + name
        if _sanitize(name) != name or ssa in self._names:
            raise ValueError("argument name %r is invalid or already used" % name)
        self._names.add(ssa)
        value = Value(ssa, shape, elem)
        self.args.append((value, dict(attrs or {})))
        return value

    def comment(self, text):
        self.lines.append("")
        self.lines.append("// " + text)

    def _emit(self, text):
        self.lines.append(text)

    def _new(self, hint, shape, elem, text):
        value = Value(self.fresh(hint), shape, elem)
        self._emit("%s = %s" % (value.name, text))
        return value

    def scalar_constant(self, value, elem=F32):
        """A function-level scalar constant (the value of a linalg.fill); one per value."""
        key = (elem, format_float(value) if elem in _FLOAT_TYPES else str(int(value)))
        if key not in self._constants:
            hint = {0.0: "zero", 1.0: "one", F32_LOWEST: "lowest"}.get(float(value), "cst")
            name = self.fresh(hint)
            self._emit("%s = arith.constant %s : %s" % (name, key[1], elem))
            self._constants[key] = name
        return self._constants[key]

    def ret(self, *values):
        self.results = list(values)

    # -- init tensors ------------------------------------------------------
    def empty(self, shape, elem=F32, hint="t"):
        return self._new(hint + "_empty", shape, elem, "tensor.empty() : %s" % tensor_type(shape, elem))

    def full(self, shape, value, elem=F32, hint="t"):
        """tensor.empty + linalg.fill: an accumulator's initial value."""
        cst = self.scalar_constant(value, elem)
        empty = self.empty(shape, elem, hint)
        return self._new(hint + "_init", shape, elem, "linalg.fill ins(%s : %s) outs(%s : %s) -> %s"
                         % (cst, elem, empty.name, empty.type, empty.type))

    # -- linalg.generic ----------------------------------------------------
    def generic(self, inputs, out_shape, body, iterators, out_map=None, out_elem=F32,
                init=None, name="t", arg_hints=None):
        """Emits a linalg.generic.

        inputs:    [(Value, exprs)], exprs indexing the value by loop dims
                   (ints name dims; strings are affine expressions)
        out_shape: shape of the result; out_map defaults to the identity
        body:      body(b, *input_scalars, out_scalar) -> Scalar, the yield
        iterators: "parallel" / "reduction" per loop
        init:      the outs operand; a fresh tensor.empty when None (the
                   body must then not read its out scalar)
        """
        loops = len(iterators)
        out_map = tuple(range(loops)) if out_map is None else tuple(out_map)
        out_type = tensor_type(out_shape, out_elem)
        if init is None:
            init = self.empty(out_shape, out_elem, name)
        maps = [affine_map(loops, exprs) for _, exprs in inputs] + [affine_map(loops, out_map)]
        b = Body(self._names)
        hints = list(arg_hints or [])
        hints += ["x%d" % i for i in range(len(hints), len(inputs))]
        scalars = [b.block_arg(hints[i], v.elem) for i, (v, _) in enumerate(inputs)]
        out_scalar = b.block_arg("acc" if "reduction" in iterators else "out", out_elem)
        result = body(b, *scalars, out_scalar)
        header = "linalg.generic {indexing_maps = [%s], iterator_types = [%s]}" % (
            ", ".join(maps), ", ".join('"%s"' % it for it in iterators))
        ins = ""
        if inputs:
            ins = " ins(%s : %s)" % (", ".join(v.name for v, _ in inputs),
                                     ", ".join(v.type for v, _ in inputs))
        block = ", ".join("%s: %s" % (s.name, s.type) for s in scalars + [out_scalar])
        text = [header, "   %s outs(%s : %s) {" % (ins, init.name, out_type),
                "^bb0(%s):" % block]
        text += ["  " + line for line in b.lines]
        text += ["  linalg.yield %s : %s" % (result.name, result.type), "} -> %s" % out_type]
        value = Value(self.fresh(name), out_shape, out_elem)
        self._emit("%s = %s" % (value.name, text[0]))
        self.lines.extend(text[1:])
        return value

    @staticmethod
    def _indexed(operand, rank):
        if isinstance(operand, At):
            return operand.value, operand.dims
        if operand.rank != rank:
            raise ValueError("%s has rank %d in a rank-%d elementwise op; wrap it in At(value, dims)"
                             % (operand.name, operand.rank, rank))
        return operand, tuple(range(rank))

    def ew(self, fn, *operands, name="t", out_shape=None, out_elem=F32, hints=None):
        """Elementwise op: result[i] = fn(b, operand scalars at i).

        Operands are Values of the result's shape or At(value, dims) for a
        value broadcast along the other dims. The result shape is the shape of
        the first full operand unless out_shape is given.
        """
        if out_shape is None:
            out_shape = next(o.shape for o in operands if not isinstance(o, At))
        rank = len(out_shape)
        inputs = [self._indexed(o, rank) for o in operands]
        for value, dims in inputs:
            if tuple(out_shape[d] for d in dims) != value.shape:
                raise ValueError("%s does not broadcast to %s along dims %s"
                                 % (value, tensor_type(out_shape), dims))
        return self.generic(inputs, out_shape, lambda b, *s: fn(b, *s[:-1]),
                            ["parallel"] * rank, out_elem=out_elem, name=name, arg_hints=hints)

    def reduce(self, fn, *operands, dims, init_value, name="t", hints=None):
        """Reduction over `dims` of the operands' common loop space.

        result[kept] = fold(acc = init_value; acc = fn(b, acc, operand scalars))
        written as a linalg.generic with "reduction" iterators into a
        linalg.fill'ed accumulator.
        """
        loop_shape = next(o.shape for o in operands if not isinstance(o, At))
        rank = len(loop_shape)
        inputs = [self._indexed(o, rank) for o in operands]
        dims = sorted(d % rank for d in dims)
        kept = tuple(d for d in range(rank) if d not in dims)
        out_shape = tuple(loop_shape[d] for d in kept)
        init = self.full(out_shape, init_value, hint=name)
        iterators = ["reduction" if d in dims else "parallel" for d in range(rank)]
        return self.generic(inputs, out_shape, lambda b, *s: fn(b, s[-1], *s[:-1]), iterators,
                            out_map=kept, init=init, name=name, arg_hints=hints)

    def reduce_sum(self, x, dims, name="sum"):
        return self.reduce(lambda b, acc, v: b.addf(acc, v), x, dims=dims, init_value=0.0, name=name)

    def reduce_max(self, x, dims, name="max"):
        return self.reduce(lambda b, acc, v: b.maximumf(v, acc), x, dims=dims,
                           init_value=F32_LOWEST, name=name)

    # -- elementwise shorthands --------------------------------------------
    def add(self, a, b, name="add"):
        return self.ew(lambda s, x, y: s.addf(x, y), a, b, name=name)

    def sub(self, a, b, name="sub"):
        return self.ew(lambda s, x, y: s.subf(x, y), a, b, name=name)

    def mul(self, a, b, name="mul"):
        return self.ew(lambda s, x, y: s.mulf(x, y), a, b, name=name)

    def div(self, a, b, name="div"):
        return self.ew(lambda s, x, y: s.divf(x, y), a, b, name=name)

    def neg(self, x, name="neg"):
        return self.ew(lambda s, v: s.negf(v), x, name=name)

    def scale(self, x, factor, name="scaled"):
        return self.ew(lambda s, v: s.mulf(v, factor), x, name=name)

    def exp(self, x, name="exp"):
        return self.ew(lambda s, v: s.exp(v), x, name=name)

    def log(self, x, name="log"):
        return self.ew(lambda s, v: s.log(v), x, name=name)

    def tanh(self, x, name="tanh"):
        return self.ew(lambda s, v: s.tanh(v), x, name=name)

    def sqrt(self, x, name="sqrt"):
        return self.ew(lambda s, v: s.sqrt(v), x, name=name)

    def rsqrt(self, x, name="rsqrt"):
        return self.ew(lambda s, v: s.rsqrt(v), x, name=name)

    def sigmoid(self, x, name="sigmoid"):
        return self.ew(lambda s, v: s.sigmoid(v), x, name=name)

    def relu(self, x, name="relu"):
        """max(x, 0) as cmpf + select: the select's mask is the derivative."""
        return self.ew(lambda s, v: s.relu(v), x, name=name)

    def relu6(self, x, name="relu6"):
        """min(max(x, 0), 6) as two cmpf + select pairs."""
        def body(s, v):
            low = s.select(s.cmpf("ogt", v, 0.0), v, 0.0)
            return s.select(s.cmpf("olt", low, 6.0), low, 6.0)
        return self.ew(body, x, name=name)

    def gelu(self, x, approximate="tanh", name="gelu"):
        return self.ew(lambda s, v: s.gelu(v, approximate), x, name=name)

    def add_bias(self, x, bias, name="biased"):
        """x + bias along the last dim."""
        return self.ew(lambda s, v, c: s.addf(v, c), x, At(bias, (x.rank - 1,)), name=name)

    # -- named structured ops ----------------------------------------------
    def matmul(self, a, b, name="mm"):
        (m, k), (k2, n) = a.shape, b.shape
        if k != k2:
            raise ValueError("matmul %s x %s" % (a.type, b.type))
        init = self.full((m, n), 0.0, hint=name)
        return self._new(name, (m, n), a.elem, "linalg.matmul ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                         % (a.name, b.name, a.type, b.type, init.name, init.type, init.type))

    def batch_matmul(self, a, b, name="bmm"):
        (bs, m, k), (bs2, k2, n) = a.shape, b.shape
        if k != k2 or bs != bs2:
            raise ValueError("batch_matmul %s x %s" % (a.type, b.type))
        init = self.full((bs, m, n), 0.0, hint=name)
        return self._new(name, (bs, m, n), a.elem,
                         "linalg.batch_matmul ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                         % (a.name, b.name, a.type, b.type, init.name, init.type, init.type))

    def transpose(self, x, perm, name="tr"):
        shape = tuple(x.shape[p] for p in perm)
        init = self.empty(shape, x.elem, name)
        return self._new(name, shape, x.elem, "linalg.transpose ins(%s : %s) outs(%s : %s) permutation = [%s]"
                         % (x.name, x.type, init.name, init.type, ", ".join(map(str, perm))))

    def broadcast(self, x, out_shape, dims, name="bc"):
        """linalg.broadcast: `dims` are the result dims that x does not have."""
        init = self.empty(out_shape, x.elem, name)
        return self._new(name, out_shape, x.elem, "linalg.broadcast ins(%s : %s) outs(%s : %s) dimensions = [%s]"
                         % (x.name, x.type, init.name, init.type, ", ".join(map(str, dims))))

    # -- reshapes and slices -----------------------------------------------
    def expand_shape(self, x, reassociation, out_shape, name="expanded"):
        return self._new(name, out_shape, x.elem, "tensor.expand_shape %s %s output_shape [%s] : %s into %s"
                         % (x.name, _reassoc(reassociation), ", ".join(map(str, out_shape)),
                            x.type, tensor_type(out_shape, x.elem)))

    def collapse_shape(self, x, reassociation, name="collapsed"):
        shape = tuple(numel([x.shape[d] for d in group]) for group in reassociation)
        return self._new(name, shape, x.elem, "tensor.collapse_shape %s %s : %s into %s"
                         % (x.name, _reassoc(reassociation), x.type, tensor_type(shape, x.elem)))

    def extract_slice(self, x, offsets, sizes, strides=None, drop_dims=(), name="slice"):
        """tensor.extract_slice; `drop_dims` lists unit dims the result omits."""
        strides = strides or [1] * x.rank
        shape = tuple(s for d, s in enumerate(sizes) if d not in drop_dims)
        return self._new(name, shape, x.elem, "tensor.extract_slice %s[%s] [%s] [%s] : %s to %s"
                         % (x.name, _ints(offsets), _ints(sizes), _ints(strides), x.type,
                            tensor_type(shape, x.elem)))

    def insert_slice(self, source, dest, offsets, sizes=None, strides=None, name="inserted"):
        sizes = sizes or source.shape
        strides = strides or [1] * dest.rank
        return self._new(name, dest.shape, dest.elem, "tensor.insert_slice %s into %s[%s] [%s] [%s] : %s into %s"
                         % (source.name, dest.name, _ints(offsets), _ints(sizes), _ints(strides),
                            source.type, dest.type))

    def pad(self, x, low, high, value=0.0, name="padded"):
        shape = tuple(d + lo + hi for d, lo, hi in zip(x.shape, low, high))
        b = Body(self._names)
        idx = [b.block_arg("i%d" % d, "index") for d in range(x.rank)]
        fill = b.const(value, x.elem)
        text = ["tensor.pad %s low[%s] high[%s] {" % (x.name, _ints(low), _ints(high)),
                "^bb0(%s):" % ", ".join("%s: index" % i.name for i in idx)]
        text += ["  " + line for line in b.lines]
        text += ["  tensor.yield %s : %s" % (fill.name, x.elem),
                 "} : %s to %s" % (x.type, tensor_type(shape, x.elem))]
        value_out = Value(self.fresh(name), shape, x.elem)
        self._emit("%s = %s" % (value_out.name, text[0]))
        self.lines.extend(text[1:])
        return value_out

    def concat(self, values, axis, name="concat"):
        """Concatenation as insert_slices into one tensor.empty, which they cover."""
        axis %= values[0].rank
        shape = list(values[0].shape)
        shape[axis] = sum(v.shape[axis] for v in values)
        result = self.empty(shape, values[0].elem, name)
        offset = 0
        for v in values:
            offsets = [0] * len(shape)
            offsets[axis] = offset
            result = self.insert_slice(v, result, offsets, name=name)
            offset += v.shape[axis]
        return result

    # -- convolution and pooling (NHWC) ------------------------------------
    def conv2d(self, x, w, stride=1, padding=0, name="conv"):
        """linalg.conv_2d_nhwc_hwcf on x [N,H,W,C] and w [KH,KW,C,F]; zero
        padding (an int, or (top, bottom, left, right)) as tensor.pad."""
        n, h, wd, c = x.shape
        kh, kw, c2, f = w.shape
        if c != c2:
            raise ValueError("conv2d: %s with filter %s" % (x.type, w.type))
        x = self._pad_hw(x, padding, 0.0, name + "_in")
        sh, sw = _pair(stride)
        oh, ow = (x.shape[1] - kh) // sh + 1, (x.shape[2] - kw) // sw + 1
        return self._windowed_op(name, "linalg.conv_2d_nhwc_hwcf", x, w,
                                 (n, oh, ow, f), sh, sw)

    def _windowed_op(self, name, op, x, w, shape, sh, sw):
        """A named convolution `op` of x and w into zeros of `shape`."""
        init = self.full(shape, 0.0, hint=name)
        return self._new(name, shape, x.elem,
                         "%s {dilations = dense<1> : tensor<2xi64>, strides = %s} "
                         "ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                         % (op, _strides_attr(sh, sw), x.name, w.name, x.type, w.type,
                            init.name, init.type, init.type))

    def _pad_hw(self, x, padding, value, name):
        if isinstance(padding, int):
            padding = (padding,) * 4
        top, bottom, left, right = padding
        if not any(padding):
            return x
        return self.pad(x, (0, top, left, 0), (0, bottom, right, 0), value, name=name + "_pad")

    def _pool(self, kind, x, kernel, stride, padding, pad_value, init_value, name):
        kh, kw = _pair(kernel)
        sh, sw = _pair(stride if stride is not None else kernel)
        x = self._pad_hw(x, padding, pad_value, name)
        n, h, w, c = x.shape
        oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
        window = self.empty((kh, kw), x.elem, name + "_window")
        init = self.full((n, oh, ow, c), init_value, hint=name)
        return self._new(name, (n, oh, ow, c), x.elem,
                         "linalg.%s {dilations = dense<1> : tensor<2xi64>, strides = %s} "
                         "ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                         % (kind, _strides_attr(sh, sw), x.name, window.name, x.type, window.type,
                            init.name, init.type, init.type))

    def max_pool2d(self, x, kernel, stride=None, padding=0, name="maxpool"):
        # Padding with the lowest finite value never wins the max.
        return self._pool("pooling_nhwc_max", x, kernel, stride, padding, F32_LOWEST, F32_LOWEST, name)

    def sum_pool2d(self, x, kernel, stride=None, padding=0, name="sumpool"):
        return self._pool("pooling_nhwc_sum", x, kernel, stride, padding, 0.0, 0.0, name)

    def avg_pool2d(self, x, kernel, stride=None, padding=0, name="avgpool"):
        """Sum pooling scaled by 1/window (padding counts, like count_include_pad)."""
        kh, kw = _pair(kernel)
        return self.scale(self.sum_pool2d(x, kernel, stride, padding, name=name + "_sum"),
                          1.0 / (kh * kw), name=name)

    def global_avg_pool(self, x, name="gap"):
        """[N,H,W,C] -> [N,C]: a sum reduction over H and W, then 1/(H W)."""
        n, h, w, c = x.shape
        total = self.reduce_sum(x, dims=(1, 2), name=name + "_sum")
        return self.scale(total, 1.0 / (h * w), name=name)

    def depthwise_conv2d(self, x, w, stride=1, padding=0, name="dwconv",
                         native=False):
        """Depthwise conv, x [N,H,W,C], w [KH,KW,C]: out = sum over taps of a
        strided window of x times that tap's per-channel weight.

        Written as one tensor.extract_slice of the (padded) input per tap and
        one elementwise linalg.generic, so that it needs no op beyond the
        builder's set; the slices bufferize to views of the padded input.
        With `native`, one linalg.depthwise_conv_2d_nhwc_hwc instead.
        """
        kh, kw, c = w.shape
        if x.shape[3] != c:
            raise ValueError("depthwise_conv2d: %s with filter %s" % (x.type, w.type))
        x = self._pad_hw(x, padding, 0.0, name + "_in")
        n, h, wd, _ = x.shape
        sh, sw = _pair(stride)
        oh, ow = (h - kh) // sh + 1, (wd - kw) // sw + 1
        if native:
            return self._windowed_op(name, "linalg.depthwise_conv_2d_nhwc_hwc", x, w,
                                     (n, oh, ow, c), sh, sw)
        windows, taps = [], []
        w_rows = self.collapse_shape(w, [[0, 1], [2]], name=name + "_taps")
        for i in range(kh):
            for j in range(kw):
                windows.append(self.extract_slice(x, (0, i, j, 0), (n, oh, ow, c), (1, sh, sw, 1),
                                                  name="%s_win%d%d" % (name, i, j)))
                taps.append(self.extract_slice(w_rows, (i * kw + j, 0), (1, c), drop_dims=(0,),
                                               name="%s_w%d%d" % (name, i, j)))

        def body(s, *scalars):
            count = len(windows)
            acc = s.mulf(scalars[0], scalars[count])
            for k in range(1, count):
                acc = s.addf(acc, s.mulf(scalars[k], scalars[count + k]))
            return acc
        return self.ew(body, *windows, *[At(t, (3,)) for t in taps], name=name)

    def upsample_nearest(self, x, factor=2, name="upsampled"):
        """[N,H,W,C] -> [N,fH,fW,C]: broadcast to [N,H,f,W,f,C], then collapse."""
        n, h, w, c = x.shape
        wide = self.broadcast(x, (n, h, factor, w, factor, c), (2, 4), name=name + "_bc")
        return self.collapse_shape(wide, [[0], [1, 2], [3, 4], [5]], name=name)

    def center_crop(self, x, height, width, name="cropped"):
        n, h, w, c = x.shape
        top, left = (h - height) // 2, (w - width) // 2
        return self.extract_slice(x, (0, top, left, 0), (n, height, width, c), name=name)

    # -- composed layers ----------------------------------------------------
    def linear(self, x, w, b=None, name="linear"):
        y = self.matmul(x, w, name=name + "_mm")
        return self.add_bias(y, b, name=name) if b is not None else y

    def softmax(self, x, name="softmax"):
        """Softmax over the last dim: max-subtract, exp, sum, divide."""
        last = x.rank - 1
        keep = tuple(range(last))
        m = self.reduce_max(x, (last,), name=name + "_max")
        e = self.ew(lambda s, v, mx: s.exp(s.subf(v, mx)), x, At(m, keep), name=name + "_exp")
        z = self.reduce_sum(e, (last,), name=name + "_sum")
        return self.ew(lambda s, v, t: s.divf(v, t), e, At(z, keep), name=name)

    def log_softmax(self, x, name="log_softmax"):
        """(x - max) - log(sum(exp(x - max))) over the last dim."""
        last = x.rank - 1
        keep = tuple(range(last))
        m = self.reduce_max(x, (last,), name=name + "_max")
        shifted = self.ew(lambda s, v, mx: s.subf(v, mx), x, At(m, keep), name=name + "_shifted")
        z = self.reduce(lambda s, acc, v: s.addf(acc, s.exp(v)), shifted, dims=(last,),
                        init_value=0.0, name=name + "_sumexp")
        return self.ew(lambda s, v, t: s.subf(v, s.log(t)), shifted, At(z, keep), name=name)

    def layer_norm(self, x, gamma, beta, eps=1e-5, name="ln"):
        """Layer norm over the last dim: (x - mean) * rsqrt(var + eps) * gamma + beta
        with the biased variance, as PyTorch's nn.LayerNorm."""
        last = x.rank - 1
        keep = tuple(range(last))
        inv = 1.0 / x.shape[last]
        total = self.reduce_sum(x, (last,), name=name + "_sum")
        centered = self.ew(lambda s, v, t: s.subf(v, s.mulf(t, inv)), x, At(total, keep),
                           name=name + "_centered")
        sq = self.reduce(lambda s, acc, v: s.addf(acc, s.mulf(v, v)), centered, dims=(last,),
                         init_value=0.0, name=name + "_sqsum")
        rstd = self.ew(lambda s, v: s.rsqrt(s.addf(s.mulf(v, inv), eps)), sq, name=name + "_rstd")
        return self.ew(lambda s, v, r, g, b: s.addf(s.mulf(s.mulf(v, r), g), b),
                       centered, At(rstd, keep), At(gamma, (last,)), At(beta, (last,)), name=name)

    def batch_norm(self, x, gamma, beta, eps=1e-5, name="bn"):
        """Training-mode batch norm over every dim but the last (N, H, W for
        NHWC): batch statistics with the biased variance, as nn.BatchNorm2d
        normalizes in training. Running statistics are not tracked."""
        last = x.rank - 1
        stats = tuple(range(last))
        inv = 1.0 / numel(x.shape[:last])
        total = self.reduce_sum(x, stats, name=name + "_sum")
        centered = self.ew(lambda s, v, t: s.subf(v, s.mulf(t, inv)), x, At(total, (last,)),
                           name=name + "_centered")
        sq = self.reduce(lambda s, acc, v: s.addf(acc, s.mulf(v, v)), centered, dims=stats,
                         init_value=0.0, name=name + "_sqsum")
        rstd = self.ew(lambda s, v: s.rsqrt(s.addf(s.mulf(v, inv), eps)), sq, name=name + "_rstd")
        return self.ew(lambda s, v, r, g, b: s.addf(s.mulf(s.mulf(v, r), g), b),
                       centered, At(rstd, (last,)), At(gamma, (last,)), At(beta, (last,)), name=name)

    def one_hot(self, ids, classes, name="onehot"):
        """Integer ids [...] -> f32 [..., classes] with 1.0 at each id: the
        class is linalg.index of the new dim compared with the id."""
        rank = ids.rank

        def body(s, ident, out):
            cls = s.index_cast(s.index(rank), ids.elem)
            return s.select(s.cmpi("eq", ident, cls), 1.0, 0.0)
        return self.generic([(ids, tuple(range(rank)))], ids.shape + (classes,), body,
                            ["parallel"] * (rank + 1), name=name, arg_hints=["id"])

    def embedding(self, ids, table, name="emb"):
        """Rows table[ids] for integer ids of any shape and table [V, D], as a
        gather: the result is [numel(ids), D] in row-major order of ids. Its
        gradient is a scatter-add into the table. The gather runs over the
        ids' shape and is collapsed after, which stays a view even when ids is
        a strided slice."""
        rank = ids.rank

        def body(s, ident, out):
            return s.extract(table, [s.index_cast(ident, "index"), s.index(rank)])
        rows = self.generic([(ids, tuple(range(rank)))], ids.shape + (table.shape[1],), body,
                            ["parallel"] * (rank + 1), name=name, arg_hints=["id"])
        if rank != 1:
            rows = self.collapse_shape(rows, [list(range(rank)), [rank]], name=name + "_2d")
        return rows

    def causal_mask(self, scores, scale=1.0, mask_value=-1e4, name="masked"):
        """scores [.., Tq, Tk] -> scale * scores where key <= query, else
        mask_value. A finite mask value (not -inf) keeps every value finite;
        -1e4 is representable in f16 and bf16 too and exp(-1e4 - max) is
        exactly 0 in f32, so masked keys get exactly zero probability."""
        q_dim, k_dim = scores.rank - 2, scores.rank - 1

        def body(s, v):
            allowed = s.cmpi("ule", s.index(k_dim), s.index(q_dim))
            return s.select(allowed, s.mulf(v, scale) if scale != 1.0 else v, mask_value)
        return self.ew(body, scores, name=name)

    def cross_entropy(self, logits, labels, name="xent"):
        """Mean over rows of -log_softmax(logits)[row, label], for 2-d logits
        [N, C]. Integer labels of any shape with N elements (in row-major
        order) are gathered, as F.cross_entropy's negative log-likelihood
        does; f32 labels [N, C] are one-hot (or soft) targets, weighted:
        with s = logits - rowmax, each row's loss is log(sum exp(s)) -
        sum_c label * s."""
        rows = logits.shape[0]
        if labels.elem != F32:
            logp = self.log_softmax(logits, name=name + "_logp")
            if labels.rank != 1:
                logp = self.expand_shape(logp, [list(range(labels.rank)), [labels.rank]],
                                         labels.shape + (logits.shape[1],), name=name + "_logp_nd")
            rank = labels.rank

            def picked(s, label, out):
                at = [s.index(d) for d in range(rank)] + [s.index_cast(label, "index")]
                return s.extract(logp, at)
            nll = self.generic([(labels, tuple(range(rank)))], labels.shape, picked,
                               ["parallel"] * rank, name=name + "_picked", arg_hints=["label"])
            total = self.reduce_sum(nll, tuple(range(rank)), name=name + "_total")
            return self.scale(total, -1.0 / rows, name=name)
        m = self.reduce_max(logits, (1,), name=name + "_max")
        shifted = self.ew(lambda s, v, mx: s.subf(v, mx), logits, At(m, (0,)), name=name + "_shifted")
        sumexp = self.reduce(lambda s, acc, v: s.addf(acc, s.exp(v)), shifted, dims=(1,),
                             init_value=0.0, name=name + "_sumexp")
        weighted = self.reduce(lambda s, acc, t, v: s.addf(acc, s.mulf(t, v)), labels, shifted,
                               dims=(1,), init_value=0.0, name=name + "_picked")
        total = self.reduce(lambda s, acc, z, t: s.addf(acc, s.subf(s.log(z), t)), sumexp, weighted,
                            dims=(0,), init_value=0.0, name=name + "_total")
        return self.scale(total, 1.0 / rows, name=name)

    def mse(self, prediction, target, name="mse"):
        """Mean over all elements of (prediction - target)^2."""
        dims = tuple(range(prediction.rank))
        total = self.reduce(lambda s, acc, p, t: s.addf(acc, s.mulf(s.subf(p, t), s.subf(p, t))),
                            prediction, target, dims=dims, init_value=0.0, name=name + "_total")
        return self.scale(total, 1.0 / prediction.numel, name=name)

    # -- rendering ------------------------------------------------------------
    def render_signature(self):
        args = []
        for value, attrs in self.args:
            text = "%s: %s" % (value.name, value.type)
            if attrs:
                text += " {%s}" % ", ".join(k if v is None else "%s = %s" % (k, v)
                                            for k, v in attrs.items())
            args.append(text)
        types = [v.type for v in self.results]
        if len(types) == 1:
            results = ["    -> %s {" % types[0]]
        else:
            results = _wrap(types, "    -> (", ") {", "        ")
        head = "func.func %s@%s(" % ("private " if self.private else "", self.name)
        pad = " " * len(head)
        return head + (",\n" + pad).join(args) + ")\n" + "\n".join(results)

    def render(self):
        if self.results is None:
            raise ValueError("@%s has no return" % self.name)
        out = [self.render_signature()]
        for line in self.lines:
            out.append(self.INDENT + line if line else "")
        names = _wrap([v.name for v in self.results], "return ", "", "    ")
        types = _wrap([v.type for v in self.results], "    : ", "", "      ")
        out.extend(self.INDENT + line for line in names + types)
        out.append("}")
        return "\n".join(out)


def _wrap(items, prefix, suffix, indent, width=100):
    """prefix + items joined by ", " + suffix, broken into lines of about
    `width` characters after a comma; continuation lines start with `indent`."""
    lines, line = [], prefix
    for i, item in enumerate(items):
        piece = item + ("," if i + 1 < len(items) else "")
        if line.strip() and len(line) + 1 + len(piece) > width and line != prefix:
            lines.append(line.rstrip())
            line = indent
        line += piece if line in (prefix, indent) else " " + piece
    lines.append(line + suffix)
    return lines


def _ints(values):
    return ", ".join(str(int(v)) for v in values)


def _reassoc(groups):
    return "[%s]" % ", ".join("[%s]" % _ints(g) for g in groups)


def _strides_attr(sh, sw):
    if sh == sw:
        return "dense<%d> : tensor<2xi64>" % sh
    return "dense<[%d, %d]> : tensor<2xi64>" % (sh, sw)


def _string_attr(text):
    return '"%s"' % text


def default_init(shape, param):
    """recast-run's default initializer of an argument (docs/UserGuide.md)."""
    if param:
        return "fan_in" if len(shape) >= 2 else "zeros"
    return None


def he_uniform(fan_in):
    """`uniform:<a>` with a = sqrt(6 / fan_in): variance 2 / fan_in, which keeps
    activations at scale through ReLU layers without normalization (He et al.)."""
    return "uniform:%s" % format_float(round(math.sqrt(6.0 / fan_in), 6))


class ArgInfo:
    """An argument of @loss and @train_step: a parameter or batch data."""

    def __init__(self, value, param, init):
        self.value = value
        self.param = param
        self.init = init   # explicit recast.init, or None for recast-run's default

    @property
    def name(self):
        return self.value.name[1:]

    def init_kind(self):
        return self.init or default_init(self.value.shape, self.param)


class Model:
    """A forward loss function plus the training step that differentiates it.

    Parameters come first in both signatures, in declaration order, then the
    batch in declaration order, whatever order the model code declares them in.
    """

    def __init__(self, title):
        self.title = title
        self.loss = Function("loss", private=True)
        self.params = []
        self.batch = []
        self._loss_value = None

    def param(self, name, shape, init=None):
        value = self.loss.arg(name, shape)
        self.params.append(ArgInfo(value, True, init))
        return value

    def input(self, name, shape, elem=F32, init=None):
        value = self.loss.arg(name, shape, elem)
        self.batch.append(ArgInfo(value, False, init))
        return value

    def set_loss(self, value):
        if value.shape != () or value.elem != F32:
            raise ValueError("the loss must be a tensor<f32>, got %s" % value.type)
        self._loss_value = value
        self.loss.ret(value)

    @property
    def arguments(self):
        return self.params + self.batch

    @property
    def parameter_count(self):
        return sum(p.value.numel for p in self.params)

    def _ordered_loss(self, private, with_init):
        """@loss with its arguments in (params, batch) order."""
        f = self.loss
        by_name = {v.name: (v, attrs) for v, attrs in f.args}
        ordered = []
        for info in self.arguments:
            value, _ = by_name[info.value.name]
            attrs = {}
            kind = info.init_kind() if with_init else None
            if kind:
                attrs["recast.init"] = _string_attr(kind)
            ordered.append((value, attrs))
        clone = Function(f.name, private=private)
        clone.args, clone.lines, clone.results = ordered, f.lines, f.results
        return clone

    def train_step(self, lr):
        """@train_step: value_and_grad of @loss for every parameter, then SGD."""
        f = Function("train_step")
        args = []
        for info in self.arguments:
            attrs = {"recast.param": None} if info.param else {}
            if info.init:
                attrs["recast.init"] = _string_attr(info.init)
            args.append(f.arg(info.name, info.value.shape, info.value.elem, attrs))
        params = args[:len(self.params)]
        loss = Value(f.fresh("loss"), (), F32)
        grads = [Value(f.fresh(p.name[1:] + "_grad"), p.shape, p.elem) for p in params]
        f.comment("Loss and gradients of @loss with respect to every parameter.")
        results = _wrap([v.name for v in [loss] + grads], "", " = recast.value_and_grad @loss(", "    ")
        operands = _wrap([a.name for a in args], "    ", ")", "    ")
        wrt = _wrap([str(i) for i in range(len(params))], "    {wrt = array<i64: ", ">}", "        ")
        types = _wrap([a.type for a in args], "    : (", ")", "       ")
        result_types = _wrap([v.type for v in [loss] + grads], "    -> (", ")", "        ")
        for line in results + operands + wrt + types + result_types:
            f._emit(line)
        f.comment("SGD: p_new = p - %s * grad." % format_float(lr))
        updated = []
        for p, g in zip(params, grads):
            updated.append(f.ew(lambda s, pv, gv: s.subf(pv, s.mulf(gv, lr)), p, g,
                                name=p.name[1:] + "_new", hints=["p", "g"]))
        f.ret(loss, *updated)
        return f

    def render_train_step(self, lr, header=()):
        """The module with @loss (private) and @train_step."""
        parts = [self._ordered_loss(private=True, with_init=False).render(),
                 self.train_step(lr).render()]
        return _render_module(header, parts)

    def render_loss_only(self, header=()):
        """A module with a public @loss only, its arguments annotated with the
        initializers @train_step would give them: `recast-run --entry=loss`
        then evaluates the forward on the same synthetic values (argument
        positions, and so random streams, are the same as in @train_step)."""
        return _render_module(header, [self._ordered_loss(private=False, with_init=True).render()])


_AFFINE_MAP = re.compile(r"affine_map<\(([^()]*)\) -> \(([^()]*)\)>")


def _alias_maps(text):
    """Replaces inline affine maps by module-level aliases named after the
    map: `#map2_01` is (d0, d1) -> (d0, d1), `#map2_1` is (d0, d1) -> (d1),
    `#map1_` is (d0) -> ()."""
    aliases = {}

    def alias(match):
        full = match.group(0)
        if full not in aliases:
            dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
            results = [r.strip() for r in match.group(2).split(",") if r.strip()]
            if all(re.fullmatch(r"d\d", r) for r in results) and len(dims) <= 10:
                name = "#map%d_%s" % (len(dims), "".join(r[1:] for r in results))
            else:
                name = "#map%d" % len(aliases)
            aliases[full] = name
        return aliases[full]
    body = _AFFINE_MAP.sub(alias, text)
    return ["%s = %s" % (name, full) for full, name in aliases.items()], body


def _render_module(header, functions):
    lines = ["// " + h if h else "//" for h in header]
    definitions, body = _alias_maps("\n\n".join(functions))
    if definitions:
        lines.append("")
        lines.extend(definitions)
        lines.append("")
    lines.append("module {")
    lines.extend(("  " + l if l else "") for l in body.split("\n"))
    lines.append("}")
    return "\n".join(lines) + "\n"
